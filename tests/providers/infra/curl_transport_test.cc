#include "providers/infra/curl_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace curl_transport_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;

namespace {

struct SeenRequest {
  std::string method;
  std::string target;
  std::string headers;  // raw header block
  std::string body;
};

struct CannedResponse {
  int status = 200;
  std::string body = "{}";
  std::string extra_headers;  // "Name: value\r\n" lines
  std::chrono::milliseconds delay{0};
};

// A tiny HTTP/1.1 keep-alive server on 127.0.0.1 for transport tests: one
// thread per connection, requests answered in order by `handler`, counts
// the TCP connections it accepted.
class LoopbackServer {
 public:
  using Handler = std::function<CannedResponse(const SeenRequest&)>;

  explicit LoopbackServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~LoopbackServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    {
      std::lock_guard lock(mu_);
      for (int fd : conn_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : conn_threads_) t.join();
    for (int fd : conn_fds_) ::close(fd);
  }

  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return connections_; }
  std::vector<SeenRequest> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      if (stopping_) {
        ::close(fd);
        return;
      }
      ++connections_;
      std::lock_guard lock(mu_);
      conn_fds_.push_back(fd);
      conn_threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string buf;
    char chunk[4096];
    for (;;) {
      size_t header_end;
      while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return Close(fd);
        buf.append(chunk, static_cast<size_t>(n));
      }
      SeenRequest req;
      std::string head = buf.substr(0, header_end);
      size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
      req.method = head.substr(0, sp1);
      req.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
      req.headers = head.substr(head.find("\r\n") + 2);
      size_t content_length = 0;
      std::string lower = req.headers;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (auto p = lower.find("content-length:"); p != std::string::npos) {
        content_length = std::stoul(lower.substr(p + 15));
      }
      while (buf.size() < header_end + 4 + content_length) {
        ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return Close(fd);
        buf.append(chunk, static_cast<size_t>(n));
      }
      req.body = buf.substr(header_end + 4, content_length);
      buf.erase(0, header_end + 4 + content_length);
      {
        std::lock_guard lock(mu_);
        seen_.push_back(req);
      }
      CannedResponse resp = handler_(req);
      if (resp.delay.count() > 0) std::this_thread::sleep_for(resp.delay);
      std::string out = "HTTP/1.1 " + std::to_string(resp.status) +
                        " X\r\nContent-Length: " + std::to_string(resp.body.size()) +
                        "\r\nContent-Type: application/json\r\n" + resp.extra_headers + "\r\n" +
                        resp.body;
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) return Close(fd);
    }
  }

  void Close(int fd) { ::shutdown(fd, SHUT_RDWR); }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> conn_fds_;              // GUARDED_BY(mu_); closed on destruction
  std::vector<std::thread> conn_threads_;  // GUARDED_BY(mu_)
  std::vector<SeenRequest> seen_;          // GUARDED_BY(mu_)
};

HttpRequest Get(const std::string& url) {
  HttpRequest r;
  r.method = "GET";
  r.url = url;
  r.timeout = 5s;
  r.connect_timeout = 2s;
  return r;
}

// Restores an environment variable on scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("curl transport reuses one connection for many requests") {
  LoopbackServer server([](const SeenRequest& req) {
    CannedResponse r;
    r.body = "{\"echo\":\"" + req.method + " " + req.target + "\"}";
    r.extra_headers = "X-Request-ID: req_abc\r\nIdempotent-Replayed: true\r\n";
    return r;
  });
  CurlTransport transport;
  for (int i = 0; i < 5; ++i) {
    auto r = transport.Send(Get(server.url("/v1/ssh_keys?limit=" + std::to_string(i))), {});
    REQUIRE(r.ok());
    CHECK(r->status == 200);
    CHECK(r->body == "{\"echo\":\"GET /v1/ssh_keys?limit=" + std::to_string(i) + "\"}");
    CHECK(r->headers.at("x-request-id") == "req_abc");  // names lowercased
    CHECK(r->Header("Idempotent-Replayed") == "true");
  }
  HttpRequest post = Get(server.url("/api/v1/compute"));
  post.method = "POST";
  post.body = R"({"name":"web"})";
  post.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", "k1"}};
  auto p = transport.Send(post, {});
  REQUIRE(p.ok());
  HttpRequest patch = post;
  patch.method = "PATCH";
  auto q = transport.Send(patch, {});
  REQUIRE(q.ok());
  HttpRequest del = Get(server.url("/api/v1/compute/x"));
  del.method = "DELETE";
  REQUIRE(transport.Send(del, {}).ok());

  CHECK(server.connections() == 1);
  auto seen = server.seen();
  REQUIRE(seen.size() == 8);
  CHECK(seen[5].method == "POST");
  CHECK(seen[5].body == R"({"name":"web"})");
  CHECK(seen[5].headers.find("Idempotency-Key: k1") != std::string::npos);
  CHECK(seen[6].method == "PATCH");
  CHECK(seen[6].body == R"({"name":"web"})");
  CHECK(seen[7].method == "DELETE");
  CHECK(seen[7].body.empty());
  CHECK(seen[0].headers.find("User-Agent: cairn") != std::string::npos);
}

TEST_CASE("curl transport reports HTTP errors as answers and refused connections as Unreachable") {
  LoopbackServer server([](const SeenRequest&) {
    CannedResponse r;
    r.status = 503;
    r.body = R"({"error":{"code":"service_unavailable"}})";
    r.extra_headers = "Retry-After: 2\r\n";
    return r;
  });
  CurlTransport transport;
  auto r = transport.Send(Get(server.url()), {});
  REQUIRE(r.ok());
  CHECK(r->status == 503);
  CHECK(r->Header("retry-after") == "2");

  // A port nobody listens on (bound, never listening).
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  auto refused =
      transport.Send(Get("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"), {});
  ::close(fd);
  REQUIRE_FALSE(refused.ok());
  // Nothing was sent: the caller knows nothing happened.
  CHECK(refused.status().code() == StatusCode::kUnreachable);
  CHECK(refused.status().message().rfind("cannot connect: ", 0) == 0);
}

TEST_CASE("curl transport times out a slow answer") {
  LoopbackServer server([](const SeenRequest&) {
    CannedResponse r;
    r.delay = 1500ms;
    return r;
  });
  CurlTransport transport;
  HttpRequest req = Get(server.url());
  req.timeout = 200ms;
  auto start = std::chrono::steady_clock::now();
  auto r = transport.Send(req, {});
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(took < 1200ms);
}

TEST_CASE("curl transport is cancelled through the stop token") {
  LoopbackServer server([](const SeenRequest&) {
    CannedResponse r;
    r.delay = 4000ms;
    return r;
  });
  CurlTransport transport;
  std::stop_source stop;
  std::jthread canceller([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  auto start = std::chrono::steady_clock::now();
  auto r = transport.Send(Get(server.url()), stop.get_token());
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
  CHECK(took < 3000ms);

  std::stop_source already;
  already.request_stop();
  CHECK(transport.Send(Get(server.url()), already.get_token()).status().code() ==
        StatusCode::kCancelled);
}

TEST_CASE("curl transport takes its proxy from the environment") {
  // The loopback server plays the proxy: a proxied plain-HTTP request
  // arrives with the absolute URL as its target.
  LoopbackServer proxy([](const SeenRequest&) { return CannedResponse{}; });
  ScopedEnv http_proxy("http_proxy", proxy.url().c_str());
  ScopedEnv no_proxy("no_proxy", nullptr);
  ScopedEnv no_proxy_upper("NO_PROXY", nullptr);
  CurlTransport transport;
  auto r = transport.Send(Get("http://api.cairn.invalid/v1/ssh_keys"), {});
  REQUIRE(r.ok());
  auto seen = proxy.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].target == "http://api.cairn.invalid/v1/ssh_keys");
}

TEST_CASE("curl transport keeps one connection per thread") {
  LoopbackServer server([](const SeenRequest&) { return CannedResponse{}; });
  CurlTransport transport;
  std::atomic<int> ok{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 4; ++i) {
          if (transport.Send(Get(server.url()), {}).ok()) ++ok;
        }
      });
    }
  }
  CHECK(ok == 12);
  CHECK(server.connections() == 3);
}

TEST_CASE("CheckTokenTransport: https anywhere, plain http only to loopback") {
  for (const char* ok :
       {"https://api.example.com", "https://10.0.0.5:8443/", "http://127.0.0.1:8080",
        "http://127.1.2.3", "http://localhost:8080", "http://[::1]:8080/",
        // libcurl reads it as 127.0.0.1, and sends there
        "http://0x7f000001"}) {
    INFO(ok);
    CHECK(CheckTokenTransport(ok, false).ok());
  }
  for (const char* refused :
       {"http://10.0.0.5:8080", "http://api.example.com", "http://127.0.0.1.example.com",
        "http://localhost.example.com", "http://[::2]:80"}) {
    INFO(refused);
    Status st = CheckTokenTransport(refused, false);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(st.message().find("refusing to send the API token over plain http") != std::string::npos);
    // On a network the user trusts, --insecure-http lets it through.
    CHECK(CheckTokenTransport(refused, true).ok());
  }
  CHECK(CheckTokenTransport("ftp://127.0.0.1", true).code() == StatusCode::kInvalidArgument);
  CHECK(CheckTokenTransport("not a url", true).code() == StatusCode::kInvalidArgument);
}

}  // namespace curl_transport_test
