// Events POSTed to `cairn watch --webhook URL`: a bounded queue and one
// thread that delivers them in order, each retried with exponential backoff
// (providers/backoff.h: from 1 s, doubling, to 60 s, jittered) until it is
// accepted (a 2xx) or
// refused for good (a 4xx other than 408 and 429), so that a receiver that is
// down for a while misses nothing. The watcher never waits for it: Post
// queues and returns; past the queue's bound the oldest event is dropped,
// and counted. The URL may hold credentials (https://user:secret@host/...):
// they are registered as secrets (base/redact.h), so no log or message
// shows them.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <stop_token>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "providers/http_transport.h"

namespace cairn {

struct WebhookOptions {
  size_t max_queue = 10'000;
  std::chrono::milliseconds first_backoff{1'000};
  std::chrono::milliseconds max_backoff{60'000};
  std::chrono::milliseconds timeout{10'000};  // one delivery attempt
};

struct WebhookCounts {
  int64_t delivered = 0;        // accepted by the receiver
  int64_t failed_attempts = 0;  // attempts that were not (then retried)
  int64_t refused = 0;          // refused for good (4xx): not retried
  int64_t dropped = 0;          // dropped from a full queue
  int64_t queued = 0;           // waiting now
};

class WebhookSender {
 public:
  // `transport` must outlive the sender.
  WebhookSender(HttpTransport& transport, std::string url, WebhookOptions options = {});
  // Stops the thread: what is still queued is not delivered.
  ~WebhookSender();
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  // Queues one event (its JSON text, as it is to be sent).
  void Post(std::string body) EXCLUDES(mu_);
  // Waits up to `timeout` for the queue to empty (SIGTERM: a last chance to
  // deliver); true when it did.
  bool Drain(std::chrono::milliseconds timeout) EXCLUDES(mu_);
  WebhookCounts counts() const EXCLUDES(mu_);
  // The URL with its credentials replaced by "***", for messages.
  const std::string& display_url() const { return display_url_; }

 private:
  void Run(std::stop_token stop) EXCLUDES(mu_);

  HttpTransport& transport_;
  const std::string url_;
  const std::string display_url_;
  const WebhookOptions options_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);  // bodies, oldest first
  bool sending_ GUARDED_BY(mu_) = false;           // the front is being delivered
  WebhookCounts counts_ GUARDED_BY(mu_);
  std::jthread thread_;  // last: starts once the rest is built
};

// `url` with its user and password replaced by "***" ("https://***@host/x"),
// as libcurl's URL API parses it; "(not a URL)" for what it does not parse.
std::string WebhookDisplayUrl(const std::string& url);

}  // namespace cairn
