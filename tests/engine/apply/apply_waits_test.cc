// WaitHandOff alone: the bound on waiting operations, and the waits that are
// over handed to the workers in order.
#include "engine/apply/apply_waits.h"

#include <catch2/catch.hpp>

namespace apply_waits_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("wait hand-off: at most max_pending operations wait, a slot reserved before sending") {
  WaitHandOff waits(2);
  CHECK(waits.idle());
  CHECK(waits.has_room());
  waits.Reserve();
  waits.Reserve();
  CHECK_FALSE(waits.has_room());
  CHECK_FALSE(waits.idle());
  CHECK(waits.pending() == 2);
  waits.Release();  // refused: it did not wait
  CHECK(waits.has_room());
  CHECK(waits.pending() == 1);
}

TEST_CASE("wait hand-off: settled waits free their slot and are finished in the order they ended") {
  WaitHandOff waits(3);
  waits.Reserve();
  waits.Reserve();
  WaitResponse ready;
  ready.resource = RemoteResource{"network", "n-1", Value::object()};
  WaitResponse failed;
  failed.status = Status::FailedPrecondition("failed");
  waits.Settle(7, failed);
  waits.Settle(4, ready);
  CHECK(waits.pending() == 0);
  CHECK_FALSE(waits.idle());  // settled, not yet finished
  REQUIRE(waits.has_settled());
  auto [first, first_wait] = waits.TakeSettled();
  CHECK(first == 7);
  CHECK_FALSE(first_wait.status.ok());
  auto [second, second_wait] = waits.TakeSettled();
  CHECK(second == 4);
  REQUIRE(second_wait.resource);
  CHECK(second_wait.resource->id == "n-1");
  CHECK(waits.idle());
}

TEST_CASE("wait hand-off: a max_pending below one still lets one operation wait") {
  WaitHandOff waits(0);
  CHECK(waits.has_room());
  waits.Reserve();
  CHECK_FALSE(waits.has_room());
}

}  // namespace apply_waits_test
