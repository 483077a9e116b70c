// Test-only: a webhook receiver on loopback that records the body of every
// POST it is sent and answers 204. It can be started on a port chosen
// beforehand (FreeLoopbackPort), so that a test can give the port to a
// sender while nothing listens there yet (a receiver that is down).
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cairn::testing {

// A loopback port nothing listens on (bound, then released).
inline int FreeLoopbackPort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

class WebhookReceiver {
 public:
  explicit WebhookReceiver(int port = 0)
      : acceptor_(io_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                      static_cast<uint16_t>(port))) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { Serve(); });
  }
  ~WebhookReceiver() {
    stopping_ = true;
    {
      // Wakes the accept (a sync accept is not woken by a close from
      // another thread); the connection closes at once.
      boost::asio::io_context io;
      boost::asio::ip::tcp::socket wake(io);
      boost::system::error_code ec;
      wake.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port_)}, ec);
    }
    if (thread_.joinable()) thread_.join();
  }
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }

 private:
  void Serve() {
    namespace http = boost::beast::http;
    while (!stopping_) {
      boost::system::error_code ec;
      boost::asio::ip::tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec) return;
      boost::beast::flat_buffer buffer;
      for (;;) {
        http::request<http::string_body> req;
        http::read(socket, buffer, req, ec);
        if (ec) break;
        {
          std::lock_guard lock(mu_);
          bodies_.push_back(req.body());
        }
        http::response<http::empty_body> res{http::status::no_content, req.version()};
        res.keep_alive(req.keep_alive());
        http::write(socket, res, ec);
        if (ec || !req.keep_alive()) break;
      }
    }
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

}  // namespace cairn::testing
