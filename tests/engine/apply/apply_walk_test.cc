// ApplyWalk alone: what becomes ready as nodes end, in which order, and
// what a failure skips.
#include "engine/apply/apply_walk.h"

#include <algorithm>
#include <catch2/catch.hpp>

namespace apply_walk_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using State = ApplyWalk::State;

namespace {

// Nodes over `changes` (addresses), with edges from -> to.
ApplyGraph Graph(const std::vector<PlannedChange>& changes,
                 const std::vector<std::pair<size_t, size_t>>& edges) {
  ApplyGraph g;
  for (const PlannedChange& c : changes) g.nodes.push_back(ApplyNode{&c});
  for (auto [from, to] : edges) {
    g.nodes[from].successors.push_back(to);
    ++g.nodes[to].predecessors;
  }
  return g;
}

std::vector<PlannedChange> Changes(const std::vector<std::string>& addresses) {
  std::vector<PlannedChange> out;
  for (const std::string& a : addresses) out.push_back(PlannedChange{.address = a});
  return out;
}

}  // namespace

TEST_CASE("apply walk: ready nodes are taken by address, dependents once all before are done") {
  // 0 network.b, 1 network.a, 2 instance.web (after both)
  auto changes = Changes({"network.b", "network.a", "instance.web"});
  ApplyWalk walk(Graph(changes, {{0, 2}, {1, 2}}));
  REQUIRE(walk.has_ready());
  CHECK(walk.TakeReady() == 1);  // network.a first
  CHECK(walk.TakeReady() == 0);
  CHECK_FALSE(walk.has_ready());
  walk.Start(1);
  walk.Start(0);
  CHECK(walk.state(0) == State::kRunning);
  CHECK(walk.Done(1) == 0);  // instance.web still waits for network.b
  CHECK_FALSE(walk.has_ready());
  CHECK(walk.Done(0) == 1);
  CHECK(walk.TakeReady() == 2);
  walk.Start(2);
  CHECK(walk.Done(2) == 0);
  CHECK(walk.waiting() == 0);
}

TEST_CASE("apply walk: a failure skips everything after it, transitively, and nothing else") {
  // 0 -> 1 -> 2, 0 -> 3; 4 independent
  auto changes = Changes({"network.a", "instance.b", "volume.c", "firewall.d", "ssh_key.e"});
  ApplyWalk walk(Graph(changes, {{0, 1}, {1, 2}, {0, 3}}));
  CHECK(walk.TakeReady() == 0);  // network.a, then ssh_key.e
  CHECK(walk.TakeReady() == 4);
  walk.Start(0);
  std::vector<size_t> skipped = walk.Fail(0);
  std::sort(skipped.begin(), skipped.end());
  CHECK(skipped == std::vector<size_t>{1, 2, 3});
  CHECK(walk.state(0) == State::kFailed);
  for (size_t s : {1, 2, 3}) CHECK(walk.state(s) == State::kSkipped);
  CHECK(walk.state(4) == State::kWaiting);  // taken, not started
  CHECK(walk.waiting() == 1);
  CHECK_FALSE(walk.has_ready());
}

TEST_CASE("apply walk: a node failed before it started skips its dependents too") {
  auto changes = Changes({"network.a", "instance.b"});
  ApplyWalk walk(Graph(changes, {{0, 1}}));
  CHECK(walk.TakeReady() == 0);
  CHECK(walk.Fail(0) == std::vector<size_t>{1});  // a request that could not be built
  CHECK(walk.waiting() == 0);
}

TEST_CASE("apply walk: journaled nodes are never offered as ready") {
  auto changes = Changes({"network.a", "network.b"});
  ApplyGraph g = Graph(changes, {});
  g.nodes[1].journaled = JournalEntry{.seq = 3, .address = "network.b"};
  ApplyWalk walk(g);
  CHECK(walk.TakeReady() == 0);
  CHECK_FALSE(walk.has_ready());
  walk.Start(1);  // the run offers it at once
  CHECK(walk.Done(1) == 0);
  CHECK(walk.state(1) == State::kDone);
}

}  // namespace apply_walk_test
