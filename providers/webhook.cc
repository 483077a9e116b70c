#include "providers/webhook.h"

#include <curl/curl.h>

#include <algorithm>
#include <random>

#include "base/redact.h"
#include "providers/backoff.h"

namespace cairn {

namespace {

// The URL `url` parsed by libcurl's URL API; null when it is not a URL.
struct WebhookParsedUrl {
  explicit WebhookParsedUrl(const std::string& url) : handle(curl_url()) {
    if (handle != nullptr && curl_url_set(handle, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
      curl_url_cleanup(handle);
      handle = nullptr;
    }
  }
  ~WebhookParsedUrl() { curl_url_cleanup(handle); }
  WebhookParsedUrl(const WebhookParsedUrl&) = delete;
  WebhookParsedUrl& operator=(const WebhookParsedUrl&) = delete;
  // A part of it as written, or "" when it has none.
  std::string Part(CURLUPart part) const {
    char* value = nullptr;
    if (handle == nullptr || curl_url_get(handle, part, &value, 0) != CURLUE_OK) return "";
    std::string out = value != nullptr ? value : "";
    curl_free(value);
    return out;
  }
  CURLU* handle;
};

}  // namespace

std::string WebhookDisplayUrl(const std::string& url) {
  WebhookParsedUrl parsed(url);
  if (parsed.handle == nullptr) return "(not a URL)";
  if (parsed.Part(CURLUPART_USER).empty() && parsed.Part(CURLUPART_PASSWORD).empty()) return url;
  curl_url_set(parsed.handle, CURLUPART_USER, "***", 0);
  curl_url_set(parsed.handle, CURLUPART_PASSWORD, nullptr, 0);
  return parsed.Part(CURLUPART_URL);
}

WebhookSender::WebhookSender(HttpTransport& transport, std::string url, WebhookOptions options)
    : transport_(transport),
      url_(std::move(url)),
      display_url_(WebhookDisplayUrl(url_)),
      options_(options) {
  // The credentials, as written in the URL, are secrets from now on.
  const WebhookParsedUrl parsed(url_);
  const std::string user = parsed.Part(CURLUPART_USER);
  const std::string password = parsed.Part(CURLUPART_PASSWORD);
  if (!password.empty()) {
    RegisterSecret(password);
    RegisterSecret(user + ":" + password);
  } else if (!user.empty()) {
    RegisterSecret(user);
  }
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

WebhookSender::~WebhookSender() {
  thread_.request_stop();
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::Post(std::string body) {
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(body));
    // Past the bound, the oldest waiting one goes (not the one being sent).
    while (queue_.size() > std::max<size_t>(options_.max_queue, 1) + (sending_ ? 1 : 0)) {
      queue_.erase(queue_.begin() + (sending_ ? 1 : 0));
      ++counts_.dropped;
    }
  }
  cv_.NotifyAll();
}

bool WebhookSender::Drain(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + timeout,
                       [this]() REQUIRES(mu_) { return queue_.empty(); });
}

WebhookCounts WebhookSender::counts() const {
  MutexLock lock(mu_);
  WebhookCounts c = counts_;
  c.queued = static_cast<int64_t>(queue_.size());
  return c;
}

void WebhookSender::Run(std::stop_token stop) {
  const BackoffPolicy policy{options_.first_backoff, options_.max_backoff, 2.0};
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> unit(0, 1);
  int attempt = 0;  // failed attempts at the front event
  while (!stop.stop_requested()) {
    std::string body;
    {
      MutexLock lock(mu_);
      cv_.Wait(mu_, stop, [this]() REQUIRES(mu_) { return !queue_.empty(); });
      if (stop.stop_requested()) return;
      body = queue_.front();
      sending_ = true;
    }
    HttpRequest req;
    req.method = "POST";
    req.url = url_;
    req.headers = {{"Content-Type", "application/json"}};
    req.body = std::move(body);
    req.timeout = options_.timeout;
    req.connect_timeout = std::min(options_.timeout, std::chrono::milliseconds(5'000));
    Result<HttpResponse> r = transport_.Send(req, stop);
    const int status = r.ok() ? r->status : 0;
    const bool accepted = status >= 200 && status < 300;
    const bool refused = status >= 400 && status < 500 && status != 408 && status != 429;
    {
      MutexLock lock(mu_);
      sending_ = false;
      if (accepted || refused) {
        queue_.pop_front();
        ++(accepted ? counts_.delivered : counts_.refused);
      } else {
        ++counts_.failed_attempts;
      }
    }
    cv_.NotifyAll();
    if (accepted || refused) {
      attempt = 0;
      continue;
    }
    // Not delivered: wait, then send the same event again.
    const auto delay = BackoffDelay(policy, attempt++, unit(rng));
    MutexLock lock(mu_);
    cv_.WaitUntil(mu_, stop, std::chrono::steady_clock::now() + delay, []() { return false; });
  }
}

}  // namespace cairn
