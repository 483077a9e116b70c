#include "server/server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "base/mutex.h"
#include "base/schema/schema_registry.h"
#include "server/api.h"
#include "server/api_store.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/postgres_api_store.h"
#include "server/rate_limiter.h"
#include "server/record_ids.h"
#include "server/request_framer.h"
#include "server/sqlite_api_store.h"
#include "server/tls.h"

namespace cairn::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
// What one read asks the socket for (the buffer grows only as far as the
// framer leaves bytes unconsumed: at most a head, or chunked framing,
// within kHeaderLimit).
constexpr size_t kReadSize = 16 * 1024;
// After answering a request it did not read to the end (413, 431, a
// malformed request), the server reads and drops what the client still
// sends for at most this long and this much before closing: closing a
// socket with unread data sends a reset, which destroys the answer in a
// client that sends its whole request before reading (Python's
// http.client, many SDKs). Past either bound the client is not waiting for
// an answer, and the reset is what it gets.
constexpr std::chrono::seconds kLingerTime{2};
constexpr size_t kLingerBytes = 16 * 1024 * 1024;
}  // namespace

// What shutdown needs of a connection, whatever its stream (plain or TLS).
class Session {
 public:
  virtual ~Session() = default;
  virtual void Start() = 0;
  // Closes the connection unless a request is being handled (shutdown).
  virtual void CloseIfIdle() = 0;
};

struct Server::Impl {
  explicit Impl(ServerOptions o) : opt(std::move(o)) {}
  ServerOptions opt;
  std::unique_ptr<ApiStore> store;
  Metrics metrics;
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<RateLimiter> limiter;
  std::unique_ptr<Api> api;
  std::unique_ptr<LifecycleWorker> worker;

  // One single-threaded io_context per I/O thread: a connection lives on
  // one of them (round robin), so its handlers never contend across
  // threads and need no strand. ioc() (the first) also runs the acceptor,
  // signals and shutdown.
  std::vector<std::unique_ptr<net::io_context>> iocs;
  size_t next_ioc = 0;
  net::io_context& ioc() { return *iocs[0]; }
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::signal_set> signals;
  std::optional<net::steady_timer> drain_timer;
  std::vector<std::thread> threads;
  uint16_t bound_port = 0;

  Mutex sessions_mu;
  std::list<std::weak_ptr<Session>> sessions GUARDED_BY(sessions_mu);
  std::atomic<bool> draining{false};
  std::atomic<bool> shutdown_requested{false};
  std::atomic<int64_t> live_sessions{0};
  bool waited = false;

  // TLS (--tls-cert/--tls-key): the context new connections use, replaced
  // by ReloadCertificate; a connection keeps the one it started with.
  bool tls = false;
  Mutex tls_mu;
  std::shared_ptr<net::ssl::context> tls_context GUARDED_BY(tls_mu);
  std::shared_ptr<net::ssl::context> TlsContextNow() {
    MutexLock lock(tls_mu);
    return tls_context;
  }

  void Accept();
  void BeginShutdown();
  void PollDrain(std::chrono::steady_clock::time_point deadline);
  // SIGTERM and SIGINT shut down; SIGHUP reloads the tokens and waits again.
  void WaitForSignal(Server* owner);

  // Makes `tokens` the whole token table of the store (its hashes and
  // projects: a scope lives in the tokens file alone) and returns it as the
  // Api's lookup (SHA-256 hex -> grant).
  Result<std::unordered_map<std::string, TokenGrant>> StoreTokens(
      const std::vector<TokenGrant>& tokens) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::unordered_map<std::string, TokenGrant> table;
    for (const TokenGrant& grant : tokens) {
      // One token opens one project, with one scope: what a request may do
      // must not depend on the order of lines (the dev token against the
      // file).
      auto [it, added] = table.emplace(grant.sha256, grant);
      if (!added && it->second.project != grant.project) {
        return Status::InvalidArgument("one token hash is given to two projects, '" +
                                       it->second.project + "' and '" + grant.project + "'");
      }
      if (!added && it->second.scope != grant.scope) {
        return Status::InvalidArgument("one token hash is given two scopes, " +
                                       std::string(TokenScopeName(it->second.scope)) + " and " +
                                       TokenScopeName(grant.scope));
      }
      if (added) rows.emplace_back(grant.sha256, grant.project);
    }
    CAIRN_RETURN_IF_ERROR(store->ReplaceTokens(rows));
    return table;
  }
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One client connection: read a request, hand it to Api, write the response,
// repeat while keep-alive. All handlers run on the connection's io_context,
// which one thread runs. `Stream` is beast::tcp_stream (plain HTTP) or
// TlsStream (--tls-cert: the handshake comes first, see StartTls).
template <class Stream>
class HttpSession final : public Session, public std::enable_shared_from_this<HttpSession<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  HttpSession(tcp::socket&& socket, Server::Impl* srv) requires(!kTls)
      : stream_(std::move(socket)), srv_(srv) {
    Count();
  }
  HttpSession(tcp::socket&& socket, Server::Impl* srv,
              std::shared_ptr<net::ssl::context> tls) requires(kTls)
      : tls_(std::move(tls)), stream_(std::move(socket), *tls_), srv_(srv) {
    Count();
  }
  ~HttpSession() override {
    srv_->metrics.ConnectionClosed();
    srv_->live_sessions--;
  }
  void Start() override {
    if constexpr (kTls) {
      net::dispatch(stream_.get_executor(),
                    beast::bind_front_handler(&HttpSession::StartTls, this->shared_from_this()));
    } else {
      net::dispatch(stream_.get_executor(),
                    beast::bind_front_handler(&HttpSession::DoRead, this->shared_from_this()));
    }
  }
  void CloseIfIdle() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (!self->busy_) self->Close();
    });
  }

 private:
  void Count() {
    srv_->live_sessions++;
    srv_->metrics.ConnectionOpened();
  }
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  // TLS: the first bytes must be a TLS handshake, all of it within the read
  // timeout. A plain HTTP request gets a 400 https_required saying so, then
  // the connection is closed.
  void StartTls() {
    if (srv_->draining) return Close();
    Tcp().expires_after(srv_->opt.idle_timeout);
    beast::async_detect_ssl(Tcp(), buffer_,
                            [self = this->shared_from_this()](beast::error_code ec, bool tls) {
                              // Connected and closed at once (a TCP health
                              // check): no handshake was tried.
                              if (ec == net::error::eof && self->buffer_.size() == 0)
                                return self->Close();
                              if (ec) return self->FailTls(ec);
                              if (!tls) return self->AnswerPlainHttp();
                              self->Handshake();
                            });
  }

  void Handshake() {
    stream_.async_handshake(net::ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](beast::error_code ec, size_t used) {
                              if (ec) return self->FailTls(ec);
                              self->buffer_.consume(used);
                              // The engine took every byte read so far; any left would be
                              // undecrypted and must not reach the framer.
                              if (self->buffer_.size() > 0) return self->Close();
                              self->DoRead();
                            });
  }

  void FailTls(beast::error_code ec) {
    srv_->metrics.CountTlsHandshakeFailure();
    spdlog::debug("TLS handshake failed, connection closed: {}", ec.message());
    Close();
  }

  // The API's error envelope, so that a client (and the engine) shows why.
  void AnswerPlainHttp() {
    srv_->metrics.CountTlsHandshakeFailure();
    ApiResponse r = Api::Error(
        400, "https_required",
        "this port speaks HTTPS only (cairn serve --tls-cert): send the request to https://",
        NewRequestId());
    res_ = {};
    res_.version(11);
    res_.result(http::status::bad_request);
    res_.set(http::field::server, "cairn");
    for (auto& [k, v] : r.headers) res_.insert(k, v);
    res_.body() = std::move(r.body);
    res_.keep_alive(false);
    res_.prepare_payload();
    Tcp().expires_after(srv_->opt.idle_timeout);
    http::async_write(Tcp(), res_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      self->Tcp().expires_never();
      if (ec) return self->Close();
      self->LingeringClose();
    });
  }

  void DoRead() {
    if (srv_->draining) return Close();
    Tcp().expires_after(srv_->opt.idle_timeout);
    Parse();
  }

  // Feeds what has arrived to the framer, reading more until it has a
  // request, an error or the end of the stream.
  void Parse() {
    if (buffer_.size() > 0) {
      const auto data = buffer_.data();
      size_t n = framer_.Feed(std::string_view(static_cast<const char*>(data.data()), data.size()));
      buffer_.consume(n);
      if (framer_.state() != RequestFramer::State::kNeedMore) return OnFramed();
    }
    stream_.async_read_some(buffer_.prepare(kReadSize), [self = this->shared_from_this()](
                                                            beast::error_code ec, size_t n) {
      // A TLS peer that closes without close_notify
      // ends its stream too (stream_truncated).
      if (ec == net::error::eof || ec == net::ssl::error::stream_truncated) {
        self->framer_.FeedEof();
        return self->OnFramed();
      }
      if (ec) return self->Close();  // timeout, reset
      self->buffer_.commit(n);
      self->Parse();
    });
  }

  void OnFramed() {
    Tcp().expires_never();
    start_ = std::chrono::steady_clock::now();
    switch (framer_.state()) {
      case RequestFramer::State::kNeedMore:
      case RequestFramer::State::kClosed:
        return Close();
      case RequestFramer::State::kFailed: {
        const FramingError& e = framer_.error();
        method_ = e.method.empty() ? "-" : e.method;
        if (e.status == 0) {
          spdlog::error("connection closed: {}", e.message);
          return Close();
        }
        std::string rid = NewRequestId();
        if (e.client_request_id && IsSaneRequestId(*e.client_request_id)) {
          rid = *e.client_request_id;
        }
        // Answered before the request was read to its end: close lingering.
        keep_alive_ = false;
        linger_ = true;
        busy_ = true;
        return Write(Api::Error(e.status, e.code, e.message, rid));
      }
      case RequestFramer::State::kComplete:
        break;
    }
    busy_ = true;
    FramedRequest framed = framer_.Take();
    keep_alive_ = framed.keep_alive;
    version_ = framed.version;
    method_ = framed.request.method;
    srv_->api->Handle(std::move(framed.request), [self = this->shared_from_this()](ApiResponse r) {
      net::dispatch(self->stream_.get_executor(),
                    [self, r = std::move(r)]() mutable { self->Write(std::move(r)); });
    });
  }

  void Write(ApiResponse r) {
    route_ = r.route;
    request_id_ = r.request_id;
    status_ = r.status;
    if (r.drop) {
      Log();
      busy_ = false;
      beast::error_code ec;
      Tcp().socket().set_option(net::socket_base::linger(true, 0), ec);
      return Close();
    }
    res_ = {};
    res_.version(version_ ? version_ : 11);
    res_.result(static_cast<http::status>(r.status));
    res_.set(http::field::server, "cairn");
    for (auto& [k, v] : r.headers) res_.insert(k, v);
    res_.body() = std::move(r.body);
    keep_alive_ = keep_alive_ && !srv_->draining;
    res_.keep_alive(keep_alive_);
    res_.prepare_payload();
    if (method_ == "HEAD") {
      // The headers GET would send, Content-Length included; no body.
      const auto length = res_.body().size();
      res_.body().clear();
      res_.content_length(length);
    }
    // A client that never reads would hold the answer, and the
    // connection, forever: the write has the read timeout too.
    Tcp().expires_after(srv_->opt.idle_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&HttpSession::OnWrite, this->shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t) {
    Tcp().expires_never();
    Log();
    busy_ = false;
    if (ec) return Close();
    if (!keep_alive_) return linger_ ? LingeringClose() : CloseAfterAnswer();
    DoRead();
  }

  // The last answer is written: over TLS, end the session with close_notify
  // (waiting for the client's at most kLingerTime: most clients just close)
  // so that the client can tell the end from a truncation, then close.
  void CloseAfterAnswer() {
    if constexpr (kTls) {
      Tcp().expires_after(kLingerTime);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        self->Tcp().expires_never();
        self->Close();
      });
    } else {
      Close();
    }
  }

  // The answer is written: end our side (FIN after it), then drop what the
  // client still sends until it ends its side too or a bound passes (see
  // kLingerTime), and only then close, so that close sends no reset.
  // Over TLS the dropped bytes are read off the socket undecrypted: they
  // are thrown away, and no TLS record is written meanwhile.
  void LingeringClose() {
    beast::error_code ec;
    Tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    buffer_.consume(buffer_.size());
    linger_left_ = kLingerBytes;
    Tcp().expires_after(kLingerTime);  // one deadline for all the reads below
    Discard();
  }

  void Discard() {
    Tcp().async_read_some(net::buffer(discard_.data(), discard_.size()),
                          [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                            // EOF (the client is done), the deadline, an error or the byte
                            // bound all end it; shutdown closes a lingering connection too.
                            if (ec || n >= self->linger_left_ || self->srv_->draining)
                              return self->Close();
                            self->linger_left_ -= n;
                            self->Discard();
                          });
  }

  void Log() {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
                    .count();
    srv_->metrics.CountResponse(status_, ms);
    spdlog::info("access request_id={} method={} route={} status={} latency_ms={:.3f}", request_id_,
                 method_.empty() ? "-" : method_, route_.empty() ? "-" : route_, status_, ms);
  }

  void Close() {
    beast::error_code ec;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    Tcp().socket().close(ec);
  }

  std::shared_ptr<net::ssl::context> tls_;  // TLS: kept alive while the connection is
  Stream stream_;
  beast::flat_buffer buffer_;
  RequestFramer framer_;
  http::response<http::string_body> res_;
  Server::Impl* srv_;
  bool busy_ = false;
  bool keep_alive_ = true;
  bool linger_ = false;                  // close lingering after the answer
  size_t linger_left_ = 0;               // bytes still to drop while lingering
  std::array<char, 16 * 1024> discard_;  // where they go
  unsigned version_ = 11;
  std::chrono::steady_clock::time_point start_;
  std::string method_, route_, request_id_;
  int status_ = 0;
};

namespace {

// Runs `ioc` until it stops. An exception escaping a handler (a bug: every
// connection's own errors are codes) ends only that handler: the unwinding
// drops the connection it served, which closes it, and the rest run on.
void RunCatching(net::io_context& ioc) {
  while (true) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error(
          "internal error: a connection's handler threw ({}), connection closed, "
          "please report",
          e.what());
    }
  }
}

}  // namespace

void Server::Impl::Accept() {
  net::io_context& target = *iocs[next_ioc++ % iocs.size()];
  acceptor->async_accept(target, [this](beast::error_code ec, tcp::socket socket) {
    if (draining) return;
    if (!ec && live_sessions.load() >= static_cast<int64_t>(opt.max_connections)) {
      // At the cap: closed at once, before a byte is read, so that the
      // client can retry elsewhere or later rather than wait in the backlog.
      metrics.CountConnectionRefused();
      spdlog::debug("connection refused: {} open (--max-connections)", live_sessions.load());
      beast::error_code close_ec;
      socket.close(close_ec);
    } else if (!ec) {
      beast::error_code opt_ec;
      socket.set_option(tcp::no_delay(true), opt_ec);  // mandatory: no 40 ms delayed-ACK stalls
      std::shared_ptr<Session> s;
      if (tls) {
        s = std::make_shared<HttpSession<TlsStream>>(std::move(socket), this, TlsContextNow());
      } else {
        s = std::make_shared<HttpSession<beast::tcp_stream>>(std::move(socket), this);
      }
      {
        MutexLock lock(sessions_mu);
        if (sessions.size() > 4096) sessions.remove_if([](auto& w) { return w.expired(); });
        sessions.push_back(s);
      }
      s->Start();
    } else if (ec == net::error::operation_aborted) {
      return;
    } else {
      spdlog::warn("accept failed: {}", ec.message());
      if (ec == net::error::no_descriptors) {
        // Out of file descriptors: pause briefly instead of spinning.
        auto t = std::make_shared<net::steady_timer>(ioc(), std::chrono::milliseconds(50));
        t->async_wait([this, t](beast::error_code) { Accept(); });
        return;
      }
    }
    Accept();
  });
}

void Server::Impl::WaitForSignal(Server* owner) {
  signals->async_wait([this, owner](beast::error_code e, int signal) {
    if (e) return;  // cancelled by shutdown
    if (signal != SIGHUP) return owner->Shutdown();
    if (Status st = owner->ReloadTokens(); !st.ok()) {
      spdlog::error("SIGHUP: tokens not reloaded, the previous ones stay: {}", st.message());
    }
    if (tls) {
      if (Status st = owner->ReloadCertificate(); !st.ok()) {
        spdlog::error("SIGHUP: TLS certificate not reloaded, the previous one stays in use: {}",
                      st.message());
      }
    }
    WaitForSignal(owner);
  });
}

void Server::Impl::BeginShutdown() {
  if (draining.exchange(true)) return;
  spdlog::info("shutting down: finishing in-flight requests");
  beast::error_code ec;
  if (acceptor) acceptor->close(ec);
  if (signals) signals->cancel(ec);
  std::vector<std::shared_ptr<Session>> live;
  {
    MutexLock lock(sessions_mu);
    for (auto& w : sessions) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
    sessions.clear();
  }
  for (auto& s : live) s->CloseIfIdle();
  live.clear();
  drain_timer.emplace(ioc());
  PollDrain(std::chrono::steady_clock::now() + opt.shutdown_grace);
}

void Server::Impl::PollDrain(std::chrono::steady_clock::time_point deadline) {
  if (live_sessions.load() == 0 || std::chrono::steady_clock::now() > deadline) {
    work.clear();
    for (auto& c : iocs) c->stop();
    return;
  }
  drain_timer->expires_after(std::chrono::milliseconds(10));
  drain_timer->async_wait([this, deadline](beast::error_code) { PollDrain(deadline); });
}

Server::Server(ServerOptions options) : impl_(new Impl(std::move(options))) {}

Server::~Server() {
  Shutdown();
  Wait();
}

Status Server::Start() {
  Impl& s = *impl_;
  // 1,000+ concurrent connections need more descriptors than the usual 1024.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  // TLS first: a bad certificate or key fails the start before anything
  // is opened or bound.
  if (s.opt.tls_cert_file.empty() != s.opt.tls_key_file.empty()) {
    return Status::InvalidArgument(
        "--tls-cert and --tls-key go together: give both (HTTPS) or neither (plain HTTP)");
  }
  if (!s.opt.tls_cert_file.empty()) {
    auto tls = LoadServerTlsContext(s.opt.tls_cert_file, s.opt.tls_key_file);
    if (!tls.ok()) return tls.status();
    s.tls = true;
    {
      MutexLock lock(s.tls_mu);
      s.tls_context = std::move(tls->context);
    }
    spdlog::info("TLS: certificate {} ({})", s.opt.tls_cert_file, tls->description);
  }
  StoreOptions so;
  so.batch_delay = s.opt.faults.mutation_delay;
  auto store = s.opt.store_url.empty() ? SqliteApiStore::Open(s.opt.data_dir, so)
                                       : PostgresApiStore::Open(s.opt.store_url, so);
  if (!store.ok()) return store.status();
  s.store = std::move(store).value();
  ApiOptions ao;
  ao.provision_delay = s.opt.provision_delay;
  ao.idempotency_retention = s.opt.idempotency_retention;
  auto schemas = SchemaRegistry::Embedded();
  if (!schemas.ok()) {
    return Status::Internal("internal error: the schemas built into cairn do not load (" +
                            schemas.status().message() + "), please report");
  }
  ao.schemas = std::move(*schemas);
  auto tokens = s.StoreTokens(s.opt.tokens);
  if (!tokens.ok()) return tokens.status();
  ao.tokens = std::move(*tokens);
  s.metrics.SetMaxConnections(static_cast<int64_t>(s.opt.max_connections));
  s.faults = std::make_unique<FaultInjector>(s.opt.faults);
  s.limiter = std::make_unique<RateLimiter>(s.opt.rate, s.opt.burst);
  s.api = std::make_unique<Api>(s.store.get(), &s.metrics, s.faults.get(), s.limiter.get(), ao);
  s.worker = std::make_unique<LifecycleWorker>(s.store.get(), s.faults.get(), &s.metrics,
                                               s.opt.provision_delay, s.opt.idempotency_retention);
  s.store->SetCommitListener([w = s.worker.get()] { w->Wake(); });
  s.worker->Start();

  beast::error_code ec;
  auto addr = net::ip::make_address(s.opt.host, ec);
  if (ec) return Status::InvalidArgument("--listen: invalid address '" + s.opt.host + "'");
  tcp::endpoint ep(addr, s.opt.port);
  // A request on a shared store blocks its thread for the database's round
  // trips, during which the thread uses no CPU: more threads than cores
  // keep the cores busy.
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  size_t n = s.opt.io_threads ? s.opt.io_threads
                              : (s.store->shared() ? std::max<size_t>(8, 4 * cores) : cores);
  for (size_t i = 0; i < n; ++i) s.iocs.push_back(std::make_unique<net::io_context>(1));
  s.acceptor.emplace(s.ioc());
  s.acceptor->open(ep.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(ep, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + s.opt.host + ":" + std::to_string(s.opt.port) +
                               ": " + ec.message());
  }
  s.bound_port = s.acceptor->local_endpoint().port();
  for (auto& c : s.iocs) s.work.push_back(net::make_work_guard(*c));
  if (s.opt.handle_signals) {
    s.signals.emplace(s.ioc(), SIGTERM, SIGINT, SIGHUP);
    s.WaitForSignal(this);
  }
  s.Accept();
  for (auto& c : s.iocs) s.threads.emplace_back([c = c.get()] { RunCatching(*c); });
  return Status::Ok();
}

std::string Server::BoundAddress() const {
  std::string host = impl_->opt.host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + std::to_string(impl_->bound_port);
}

uint16_t Server::BoundPort() const { return impl_->bound_port; }

Status Server::ReloadTokens() {
  Impl& s = *impl_;
  if (!s.opt.reload_tokens) return Status::FailedPrecondition("no tokens source to reload");
  auto tokens = s.opt.reload_tokens();
  if (!tokens.ok()) return tokens.status();
  auto table = s.StoreTokens(*tokens);
  if (!table.ok()) return table.status();
  size_t n = table->size();
  s.api->SetTokens(std::move(*table));
  spdlog::warn("tokens reloaded: {} accepted; any other token is refused from now on", n);
  return Status::Ok();
}

Status Server::ReloadCertificate() {
  Impl& s = *impl_;
  if (!s.tls) return Status::FailedPrecondition("not serving TLS: no certificate to reload");
  auto tls = LoadServerTlsContext(s.opt.tls_cert_file, s.opt.tls_key_file);
  if (!tls.ok()) return tls.status();
  {
    MutexLock lock(s.tls_mu);
    s.tls_context = std::move(tls->context);
  }
  spdlog::warn("TLS certificate reloaded: {} ({}); new connections use it", s.opt.tls_cert_file,
               tls->description);
  return Status::Ok();
}

bool Server::Tls() const { return impl_->tls; }

void Server::Shutdown() {
  if (impl_->shutdown_requested.exchange(true)) return;
  if (impl_->iocs.empty()) return;  // never started
  net::post(impl_->ioc(), [s = impl_.get()] { s->BeginShutdown(); });
}

void Server::Wait() {
  Impl& s = *impl_;
  if (s.waited) return;
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  if (s.worker) s.worker->Stop();
  if (s.store) s.store->Close();
  s.waited = true;
}

Status ParseRateLimit(const std::string& text, double* rate, int64_t* burst) {
  if (text == "0" || text.empty()) {
    *rate = 0;
    *burst = 0;
    return Status::Ok();
  }
  size_t colon = text.find(':');
  try {
    size_t used = 0;
    double r = std::stod(text.substr(0, colon), &used);
    // NaN compares false to everything (it passed "r < 0" and turned the
    // limiter off), infinity never refills a bucket it can count: only a
    // finite positive rate is one; "0" alone turns limiting off.
    if (used != text.substr(0, colon).size() || !std::isfinite(r) || r <= 0) {
      throw std::invalid_argument("rate");
    }
    int64_t b = static_cast<int64_t>(std::ceil(r));
    if (colon != std::string::npos) {
      std::string bs = text.substr(colon + 1);
      b = std::stoll(bs, &used);
      if (used != bs.size() || b < 1) throw std::invalid_argument("burst");
    }
    *rate = r;
    *burst = std::max<int64_t>(b, 1);
    return Status::Ok();
  } catch (const std::exception&) {
    return Status::InvalidArgument(
        "--rate-limit: expected RATE:BURST (e.g. 100:200; RATE a finite number above 0) or 0, "
        "got '" +
        text + "'");
  }
}

Result<std::vector<TokenGrant>> ReadTokensFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read tokens file " + path);
  std::vector<TokenGrant> out;
  std::unordered_map<std::string, std::pair<TokenGrant, int>> seen;  // sha -> grant, line
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ls(line);
    TokenGrant grant;
    std::string scope, extra;
    if (!(ls >> grant.project) || grant.project[0] == '#') continue;
    bool ok = static_cast<bool>(ls >> grant.sha256) && grant.sha256.size() == 64 &&
              grant.sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (ok && ls >> scope) {
      ok = (scope == "read" || scope == "write") && !(ls >> extra);
      grant.scope = scope == "read" ? TokenScope::kRead : TokenScope::kWrite;
    }
    if (!ok) {
      return Status::InvalidArgument(
          path + ":" + std::to_string(lineno) +
          ": expected 'PROJECT SHA256_HEX [read|write]' (64 lowercase hex digits; the scope "
          "defaults to write)");
    }
    auto [it, added] = seen.emplace(grant.sha256, std::pair{grant, lineno});
    const std::string at = path + ":" + std::to_string(lineno) + ": this token hash is already ";
    if (!added && it->second.first.project != grant.project) {
      return Status::InvalidArgument(at + "given to project '" + it->second.first.project +
                                     "' (line " + std::to_string(it->second.second) +
                                     "): a token opens one project");
    }
    if (!added && it->second.first.scope != grant.scope) {
      return Status::InvalidArgument(at + "given scope " + TokenScopeName(it->second.first.scope) +
                                     " (line " + std::to_string(it->second.second) +
                                     "): a token has one scope");
    }
    out.push_back(std::move(grant));
  }
  return out;
}

}  // namespace cairn::server
