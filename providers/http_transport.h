// HttpTransport: one HTTP exchange, nothing more. The infra provider builds
// requests and interprets responses; the transport moves bytes. The real one
// is libcurl (providers/infra/curl_transport.h); tests use canned responses and
// injected faults.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn {

struct HttpRequest {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string url;     // absolute
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{30'000};         // whole exchange
  std::chrono::milliseconds connect_timeout{5'000};  // TCP + TLS handshake
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;

  // The header's value, or "" (name in any case).
  std::string Header(const std::string& name) const;
};

// Thread-safe. A network failure is a non-OK Status: Unreachable when the
// request was never sent (name not resolved, connection refused or not made
// within connect_timeout, a TLS handshake that failed), FailedPrecondition
// when it was not sent because the server's TLS certificate is not trusted
// (retrying cannot help), else Unavailable or DeadlineExceeded (reset,
// timeout: it may have been received). Any HTTP answer is OK.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& req, std::stop_token stop) = 0;
};

// Counts the exchanges it passes on to `inner` (sent or not): what
// `cairn watch` reports as a run's API requests.
class CountingTransport final : public HttpTransport {
 public:
  explicit CountingTransport(std::unique_ptr<HttpTransport> inner) : inner_(std::move(inner)) {}
  Result<HttpResponse> Send(const HttpRequest& req, std::stop_token stop) override {
    sent_.fetch_add(1, std::memory_order_relaxed);
    return inner_->Send(req, std::move(stop));
  }
  int64_t sent() const { return sent_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<HttpTransport> inner_;
  std::atomic<int64_t> sent_{0};
};

}  // namespace cairn
