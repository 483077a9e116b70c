// Per-project token buckets (spec 8). Each project's bucket holds at most
// `burst` tokens and refills at `rate` tokens per second; a request takes one
// token or is refused with the time until one is available. The clock is
// passed in, so tests drive it by hand. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"

namespace cairn::server {

struct RateLimitDecision {
  bool allowed = true;
  int64_t limit = 0;        // RateLimit-Limit: the bucket size
  int64_t remaining = 0;    // RateLimit-Remaining: whole tokens left after this request
  int64_t reset_secs = 0;   // RateLimit-Reset: seconds until the bucket is full again
  int64_t retry_after = 0;  // Retry-After (when refused): whole seconds, at least 1
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // rate <= 0 disables limiting (every request is allowed).
  RateLimiter(double rate, int64_t burst) : rate_(rate), burst_(burst < 1 ? 1 : burst) {}
  bool enabled() const { return rate_ > 0; }
  double rate() const { return rate_; }
  int64_t burst() const { return burst_; }
  RateLimitDecision Acquire(std::string_view project, Clock::time_point now);
  // The decision for a request that found `tokens` left in its bucket after
  // taking one (allowed), or not enough (refused): the headers' figures.
  RateLimitDecision Decide(bool allowed, double tokens) const;

 private:
  struct Bucket {
    double tokens;
    Clock::time_point last;
  };
  const double rate_;
  const int64_t burst_;
  Mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
};

}  // namespace cairn::server
