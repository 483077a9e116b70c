#include "cli/watch_http.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

namespace cairn::cli {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// One connection: requests read and answered in turn (keep-alive), each
// within 10 s.
class WatchHttpSession : public std::enable_shared_from_this<WatchHttpSession> {
 public:
  WatchHttpSession(tcp::socket socket, const WatchHttpServer::Handler& handler)
      : stream_(std::move(socket)), handler_(handler) {}

  void Read() {
    request_ = {};
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Answer();
                     });
  }

 private:
  void Answer() {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(request_.version());
    res->keep_alive(request_.keep_alive());
    res->set(http::field::server, "cairn-watch");
    res->set(http::field::cache_control, "no-store");
    if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
      res->result(http::status::method_not_allowed);
      res->set(http::field::allow, "GET, HEAD");
      res->set(http::field::content_type, "text/plain; charset=utf-8");
      res->body() = "only GET and HEAD\n";
    } else {
      std::string path(request_.target());
      if (size_t q = path.find_first_of("?#"); q != std::string::npos) path.resize(q);
      WatchHttpReply reply = handler_(path);
      res->result(static_cast<unsigned>(reply.status));
      res->set(http::field::content_type, reply.content_type);
      res->body() = std::move(reply.body);
    }
    res->prepare_payload();
    if (request_.method() == http::verb::head) res->body().clear();
    stream_.expires_after(std::chrono::seconds(10));
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec || !res->keep_alive()) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->Read();
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{8192};
  http::request<http::string_body> request_;
  const WatchHttpServer::Handler& handler_;
};

}  // namespace

struct WatchHttpServer::Impl {
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  Handler handler;
  std::string address;
  std::thread thread;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (!ec) {
        beast::error_code opt;
        socket.set_option(tcp::no_delay(true), opt);
        std::make_shared<WatchHttpSession>(std::move(socket), handler)->Read();
      }
      Accept();
    });
  }
};

Result<std::unique_ptr<WatchHttpServer>> WatchHttpServer::Start(const std::string& listen,
                                                                Handler handler) {
  const size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? "" : listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  if (!port_text.empty() && port_text.size() <= 5 &&
      port_text.find_first_not_of("0123456789") == std::string::npos) {
    port = std::stoi(port_text);
  }
  beast::error_code ec;
  const net::ip::address ip = net::ip::make_address(host, ec);
  if (ec || port < 0 || port > 65535) {
    return Status::InvalidArgument("--listen " + listen +
                                   ": expected HOST:PORT with an IP address, such as "
                                   "127.0.0.1:9464 or [::1]:9464");
  }
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  const tcp::endpoint endpoint(ip, static_cast<uint16_t>(port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("--listen " + listen + ": " + ec.message());
  const tcp::endpoint bound = impl->acceptor.local_endpoint();
  impl->address =
      (ip.is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) + ":" +
      std::to_string(bound.port());
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<WatchHttpServer>(new WatchHttpServer(std::move(impl)));
}

WatchHttpServer::WatchHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WatchHttpServer::~WatchHttpServer() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

const std::string& WatchHttpServer::address() const { return impl_->address; }

}  // namespace cairn::cli
