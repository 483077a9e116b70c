// A scripted HttpTransport for provider tests: answers from a queue of canned
// responses and injected faults (drop, 5xx, 429 with Retry-After), falling back
// to a handler, and records every request it was given. Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "providers/http_transport.h"

namespace cairn::testing {

inline HttpResponse JsonAnswer(int status, const std::string& body,
                               std::map<std::string, std::string> headers = {}) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  r.headers = std::move(headers);
  r.headers["content-type"] = "application/json";
  return r;
}

inline HttpResponse ErrorAnswer(int status, const std::string& code, const std::string& message,
                                std::map<std::string, std::string> headers = {}) {
  return JsonAnswer(status,
                    "{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message +
                        "\",\"request_id\":\"req_server\"}}",
                    std::move(headers));
}

inline HttpResponse RateLimited(int retry_after_seconds) {
  return ErrorAnswer(429, "rate_limited", "slow down",
                     {{"retry-after", std::to_string(retry_after_seconds)}});
}

inline Result<HttpResponse> Dropped() {
  return Status::Unavailable("Recv failure: Connection reset by peer");
}

class FakeTransport final : public HttpTransport {
 public:
  using Handler = std::function<Result<HttpResponse>(const HttpRequest&)>;

  // Queued answers are used first, in order; then the handler; then 500.
  void Push(Result<HttpResponse> answer) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(answer));
  }
  void SetHandler(Handler h) {
    std::lock_guard lock(mu_);
    handler_ = std::move(h);
  }

  Result<HttpResponse> Send(const HttpRequest& req, std::stop_token) override {
    Handler handler;
    {
      std::lock_guard lock(mu_);
      sent_.push_back(req);
      if (!queue_.empty()) {
        Result<HttpResponse> a = std::move(queue_.front());
        queue_.pop_front();
        return a;
      }
      handler = handler_;
    }
    if (handler) return handler(req);
    return ErrorAnswer(500, "internal_error", "no scripted answer");
  }

  std::vector<HttpRequest> sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return sent_.size();
  }

 private:
  std::mutex mu_;
  std::deque<Result<HttpResponse>> queue_;
  Handler handler_;
  std::vector<HttpRequest> sent_;
};

inline std::string HeaderOf(const HttpRequest& req, const std::string& name) {
  for (const auto& [k, v] : req.headers) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace cairn::testing
