// CheckPush and PushCommit: what `cairn state push` may restore, and the
// one commit that restores it (tests/cli/state_commands_test.cc runs the
// command end to end).
#include "engine/operations/state_push.h"

#include <catch2/catch.hpp>

#include "engine/state/memory_state_store.h"

namespace state_push_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

ResourceState Res(const std::string& address, const std::string& id) {
  ResourceState rs;
  rs.address = address;
  rs.kind = address.substr(0, address.find('.'));
  rs.id = id;
  return rs;
}

StateSnapshot State(std::string lineage, int64_t serial, std::vector<ResourceState> resources,
                    int64_t sequence = 0) {
  StateSnapshot st;
  st.lineage = std::move(lineage);
  st.serial = serial;
  st.sequence = sequence;
  for (auto& rs : resources) st.resources[rs.address] = std::move(rs);
  return st;
}

std::string Why(const StateSnapshot& current, size_t in_flight, const StateSnapshot& pushed,
                bool force = false) {
  Status st = CheckPush(current, in_flight, pushed, "backup.json", force);
  if (!st.ok()) CHECK(st.code() == StatusCode::kFailedPrecondition);
  return st.message();
}

}  // namespace

TEST_CASE("state push: the same lineage at the same or a later serial is restored") {
  const StateSnapshot pushed = State("L", 7, {Res("network.a", "n1")});
  CHECK(Why(State("L", 7, {}), 0, pushed).empty());
  CHECK(Why(State("L", 3, {}), 0, pushed).empty());
}

TEST_CASE("state push: a state that changed after the pull is kept, unless forced") {
  const StateSnapshot pushed = State("L", 7, {});
  CHECK(Why(State("L", 9, {}), 0, pushed) ==
        "the state (serial 9) is newer than backup.json (serial 7): it changed after the file "
        "was pulled; pass --force to go back to the file anyway");
  CHECK(Why(State("L", 9, {}), 0, pushed, /*force=*/true).empty());
}

TEST_CASE("state push: another stack's state is refused, unless forced") {
  const StateSnapshot pushed = State("THEIRS", 50, {});
  CHECK(Why(State("MINE", 2, {}), 0, pushed) ==
        "backup.json was pulled from another state (lineage THEIRS; this stack's state is MINE); "
        "pass --force to replace this state with it");
  CHECK(Why(State("MINE", 2, {}), 0, pushed, /*force=*/true).empty());
}

TEST_CASE("state push: a state that never recorded anything takes any pulled state") {
  // Serial 0: a new state, or a lost file created again; lineage and serial
  // say nothing about it.
  CHECK(Why(State("FRESH", 0, {}), 0, State("OLD", 12, {})).empty());
  CHECK(Why(State("FRESH", 0, {}), 0, State("FRESH", 0, {})).empty());
}

TEST_CASE("state push: operations in flight are finished first, unless forced") {
  const std::string expected =
      "the state has 2 operation(s) in flight, left by an interrupted apply or destroy; run "
      "'cairn apply' to finish them first (or pass --force: the next apply finishes them over "
      "the pushed state)";
  CHECK(Why(State("L", 3, {}), 2, State("L", 3, {})) == expected);
  // Even on a state that never committed: the journal is written under it.
  CHECK(Why(State("L", 0, {}), 2, State("X", 3, {})) == expected);
  CHECK(Why(State("L", 3, {}), 2, State("L", 3, {}), /*force=*/true).empty());
}

TEST_CASE("state push: the commit replaces resources and outputs and raises serial and sequence") {
  StateSnapshot current = State("MINE", 9, {Res("network.a", "n1"), Res("network.gone", "n2")});
  current.outputs = {{"old", "x"}};
  StateSnapshot pushed =
      State("THEIRS", 20, {Res("network.a", "n1-restored"), Res("instance.web", "i1")}, 40);
  pushed.outputs = {{"ip", "10.0.0.1"}, {"secret", "s"}};
  pushed.sensitive_outputs = {"secret"};

  StateCommit commit = PushCommit(current, pushed);
  REQUIRE(commit.put.size() == 2);
  CHECK(commit.remove == std::vector<std::string>{"network.gone"});
  REQUIRE(commit.restore.has_value());
  CHECK(commit.restore->lineage == "THEIRS");
  CHECK(commit.restore->min_serial == 21);
  CHECK(commit.restore->min_sequence == 40);

  // Committed over a store written more than the file (serial 31, 60
  // sequence numbers used): the file's resources and outputs replace its
  // own, and neither counter goes down.
  MemoryStateStore store;
  REQUIRE(store.Load().ok());
  StateCommit before;
  for (const auto& [address, rs] : current.resources) before.put.push_back(rs);
  before.outputs = current.outputs;
  REQUIRE(store.Commit(before).ok());
  for (int i = 0; i < 30; ++i) REQUIRE(store.Commit({}).ok());
  REQUIRE(store.ReserveSequences(60).ok());
  auto loaded = store.Load();
  REQUIRE(loaded.ok());
  REQUIRE(store.Commit(PushCommit(*loaded, pushed)).ok());
  auto after = store.Load();
  REQUIRE(after.ok());
  CHECK(after->lineage == "THEIRS");
  CHECK(after->serial == 32);
  CHECK(after->sequence == 60);
  CHECK(after->resources.size() == 2);
  CHECK(after->resources.at("network.a").id == "n1-restored");
  CHECK(after->outputs == pushed.outputs);
  CHECK(after->sensitive_outputs == std::set<std::string>{"secret"});
}

}  // namespace state_push_test
