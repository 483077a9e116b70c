#include "base/clock.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <stop_token>
#include <thread>

namespace clock_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;

TEST_CASE("real clock: a sleep nothing can stop lasts at least its duration") {
  RealClock clock;
  auto start = clock.Now();
  CHECK(clock.SleepFor(20ms, std::stop_token{}));
  CHECK(clock.Now() - start >= 20ms);
}

TEST_CASE("real clock: a stoppable sleep lasts its duration unless stopped") {
  RealClock clock;
  std::stop_source never;
  auto start = clock.Now();
  CHECK(clock.SleepFor(20ms, never.get_token()));
  CHECK(clock.Now() - start >= 20ms);

  std::stop_source already;
  already.request_stop();
  CHECK_FALSE(clock.SleepFor(1h, already.get_token()));
}

TEST_CASE("real clock: a stop request ends a long sleep early") {
  RealClock clock;
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(20ms);
    stop.request_stop();
  });
  // Returns false, and long before the hour (the test would time out).
  CHECK_FALSE(clock.SleepFor(1h, stop.get_token()));
}

}  // namespace clock_test
