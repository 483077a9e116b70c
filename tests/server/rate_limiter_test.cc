#include "server/rate_limiter.h"

#include <catch2/catch.hpp>

#include "server/server.h"

namespace rate_limiter_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;
using namespace std::chrono_literals;

TEST_CASE("a token bucket allows the burst, then refuses with a computed Retry-After") {
  RateLimiter rl(2.0, 3);  // 2/s, burst 3
  auto t0 = RateLimiter::Clock::time_point{} + 1000s;
  for (int i = 0; i < 3; ++i) {
    auto d = rl.Acquire("p", t0);
    CHECK(d.allowed);
    CHECK(d.limit == 3);
    CHECK(d.remaining == 2 - i);
  }
  auto refused = rl.Acquire("p", t0);
  CHECK_FALSE(refused.allowed);
  CHECK(refused.retry_after == 1);  // 0 tokens, 2/s: 0.5 s, rounded up to whole seconds
  CHECK(refused.remaining == 0);
  CHECK(refused.reset_secs == 2);  // 3 tokens at 2/s
  // Half a second later one token is back.
  CHECK(rl.Acquire("p", t0 + 500ms).allowed);
  CHECK_FALSE(rl.Acquire("p", t0 + 500ms).allowed);
  // Projects have separate buckets.
  CHECK(rl.Acquire("q", t0).allowed);
  // Refill never exceeds the burst.
  auto later = rl.Acquire("p", t0 + 1h);
  CHECK(later.allowed);
  CHECK(later.remaining == 2);
}

TEST_CASE("slow rates give Retry-After in whole seconds") {
  RateLimiter rl(0.25, 1);  // one per 4 s
  auto t0 = RateLimiter::Clock::time_point{} + 10s;
  CHECK(rl.Acquire("p", t0).allowed);
  auto d = rl.Acquire("p", t0 + 1s);
  CHECK_FALSE(d.allowed);
  CHECK(d.retry_after == 3);
}

TEST_CASE("rate 0 disables limiting") {
  RateLimiter rl(0, 0);
  CHECK_FALSE(rl.enabled());
  for (int i = 0; i < 1000; ++i) CHECK(rl.Acquire("p", RateLimiter::Clock::now()).allowed);
}

TEST_CASE("ParseRateLimit refuses every rate that is not finite and above 0") {
  double rate = -1;
  int64_t burst = -1;
  for (const char* bad : {"NaN:5", "nan", "-nan:5", "inf:5", "infinity", "-1:5", "0:5", "0.0",
                          "1e999:5", "fast", "5:0", "5:x"}) {
    INFO(bad);
    CHECK_FALSE(cairn::server::ParseRateLimit(bad, &rate, &burst).ok());
  }
  REQUIRE(cairn::server::ParseRateLimit("0", &rate, &burst).ok());
  CHECK(rate == 0);
  REQUIRE(cairn::server::ParseRateLimit("0.5:3", &rate, &burst).ok());
  CHECK(rate == 0.5);
  CHECK(burst == 3);
}

}  // namespace rate_limiter_test
