#include "server/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace cairn::server {

RateLimitDecision RateLimiter::Acquire(std::string_view project, Clock::time_point now) {
  RateLimitDecision d;
  d.limit = burst_;
  if (!enabled()) {
    d.remaining = burst_;
    return d;
  }
  MutexLock lock(mu_);
  auto it = buckets_.find(std::string(project));
  if (it == buckets_.end()) {
    it = buckets_.emplace(std::string(project), Bucket{static_cast<double>(burst_), now}).first;
  }
  Bucket& b = it->second;
  if (now > b.last) {
    double elapsed = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(static_cast<double>(burst_), b.tokens + elapsed * rate_);
    b.last = now;
  }
  bool allowed = b.tokens >= 1.0;
  if (allowed) b.tokens -= 1.0;
  return Decide(allowed, b.tokens);
}

RateLimitDecision RateLimiter::Decide(bool allowed, double tokens) const {
  RateLimitDecision d;
  d.limit = burst_;
  d.allowed = allowed;
  if (!allowed) {
    d.retry_after = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((1.0 - tokens) / rate_)));
  }
  d.remaining = static_cast<int64_t>(std::floor(tokens));
  d.reset_secs = static_cast<int64_t>(std::ceil((burst_ - tokens) / rate_));
  return d;
}

}  // namespace cairn::server
