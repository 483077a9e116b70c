#include "providers/ready_estimate.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace ready_estimate_test {  // one namespace per test file: see tests/CMakeLists.txt

using cairn::ReadyEstimate;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("ready estimate: starts at the initial delay, per kind") {
  ReadyEstimate e(milliseconds(5), milliseconds(1), seconds(10));
  CHECK(e.FirstPoll("instance") == milliseconds(5));
  e.Record("instance", /*on_first_poll=*/false, seconds(30));
  CHECK(e.FirstPoll("instance") > milliseconds(5));
  CHECK(e.FirstPoll("network") == milliseconds(5));  // other kinds unaffected
}

TEST_CASE("ready estimate: first-poll hits shrink it, down to the floor") {
  ReadyEstimate e(milliseconds(10), milliseconds(1), seconds(10));
  e.Record("instance", true, milliseconds(10));
  CHECK(e.FirstPoll("instance") == milliseconds(9));
  for (int i = 0; i < 100; ++i) e.Record("instance", true, milliseconds(1));
  CHECK(e.FirstPoll("instance") == milliseconds(1));
}

TEST_CASE("ready estimate: with a zero floor, hits take it to zero and a miss back up") {
  ReadyEstimate e(milliseconds(5), microseconds(0), seconds(10));
  for (int i = 0; i < 200; ++i) e.Record("instance", true, microseconds(0));
  CHECK(e.FirstPoll("instance") == microseconds(0));
  e.Record("instance", false, milliseconds(8));
  CHECK(e.FirstPoll("instance") == milliseconds(4));  // half of what readiness took
}

TEST_CASE("ready estimate: a miss grows it by half, at most to what readiness took") {
  ReadyEstimate e(milliseconds(10), milliseconds(1), seconds(10));
  e.Record("instance", false, milliseconds(12));
  CHECK(e.FirstPoll("instance") == milliseconds(12));  // not 15: it took 12
  e.Record("instance", false, milliseconds(100));
  CHECK(e.FirstPoll("instance") == milliseconds(50));  // half of 100 beats 1.5 x 12
  e.Record("instance", false, milliseconds(60));
  CHECK(e.FirstPoll("instance") == milliseconds(60));
  e.Record("instance", false, milliseconds(1000));
  CHECK(e.FirstPoll("instance") == milliseconds(500));
  // A slow API: within a few creates the first poll comes near the time
  // provisioning takes, instead of a dozen polls from 5 ms up.
  ReadyEstimate slow(milliseconds(5), milliseconds(1), seconds(10));
  slow.Record("instance", false, milliseconds(32'765));
  CHECK(slow.FirstPoll("instance") == seconds(10));  // ceiling
}

TEST_CASE("ready estimate: many misses at once raise it once, not once each") {
  ReadyEstimate e(milliseconds(2), milliseconds(1), seconds(10));
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&] { e.Record("instance", false, milliseconds(3)); });
  }
  for (auto& t : threads) t.join();
  // 1.5^32 x 2 ms would be the ceiling; what readiness took bounds it.
  CHECK(e.FirstPoll("instance") == milliseconds(3));
}

}  // namespace ready_estimate_test
