// OperationTimes alone: durations, and which long operations the monitor
// reports as still running.
#include "engine/apply/apply_timing.h"

#include <catch2/catch.hpp>

namespace apply_timing_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;

TEST_CASE("operation times: an operation's run time is from its start") {
  ManualClock clock;
  OperationTimes times(2);
  times.Start(1, clock.Now());
  clock.Advance(1500ms);
  CHECK(times.Elapsed(1, clock.Now()) == 1500ms);
  CHECK(times.started(1) + 1500ms == clock.Now());
}

TEST_CASE("operation times: a running operation is reported once per interval of its run time") {
  ManualClock clock;
  OperationTimes times(3);
  times.Start(0, clock.Now());
  clock.Advance(4s);
  times.Start(2, clock.Now());
  auto all = [](size_t i) { return i != 1; };  // 1 never started
  clock.Advance(7s);                           // 0 has run 11 s, 2 for 7 s
  auto due = times.StillRunning(clock.Now(), 10s, all);
  REQUIRE(due.size() == 1);
  CHECK(due[0].first == 0);
  CHECK(due[0].second == 11s);
  // Looking again soon reports nothing: 0 was reported at 11 s.
  clock.Advance(2s);
  CHECK(times.StillRunning(clock.Now(), 10s, all).empty());
  clock.Advance(2s);  // 0 at 15 s, 2 at 11 s
  due = times.StillRunning(clock.Now(), 10s, all);
  REQUIRE(due.size() == 1);
  CHECK(due[0].first == 2);
  clock.Advance(6s);  // 0 at 21 s: 10 s since its report
  due = times.StillRunning(clock.Now(), 10s, all);
  REQUIRE(due.size() == 1);
  CHECK(due[0] == std::pair<size_t, std::chrono::milliseconds>{0, 21s});
}

TEST_CASE("operation times: only what is running is reported") {
  ManualClock clock;
  OperationTimes times(2);
  times.Start(0, clock.Now());
  times.Start(1, clock.Now());
  clock.Advance(30s);
  auto due = times.StillRunning(clock.Now(), 10s, [](size_t i) { return i == 1; });
  REQUIRE(due.size() == 1);
  CHECK(due[0].first == 1);
}

}  // namespace apply_timing_test
