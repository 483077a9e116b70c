// The recorder alone: what a create, update or delete that took effect
// commits to the state, and the hand-off of deferred commits to the
// recorder thread.
#include "engine/apply/apply_recorder.h"

#include <catch2/catch.hpp>

#include "engine/apply/apply_graph.h"
#include "engine/state/memory_state_store.h"

namespace apply_recorder_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

PlannedChange Change(const std::string& address, Action action) {
  PlannedChange c;
  c.address = address;
  c.parsed_address = *ResourceAddress::Parse(address);
  c.kind = c.parsed_address.kind;
  c.action = action;
  c.depends_on = {"network.core"};
  return c;
}

}  // namespace

TEST_CASE("recorder: a create that took effect commits the resource as the API returned it") {
  PlannedChange c = Change("instance.web", Action::kCreate);
  RemoteResource remote{"instance", "i-1", {{"name", "web"}, {"status", "running"}}};
  StateCommit commit =
      ResultCommit(c, Action::kCreate, 4, remote, WaitResponse{}, Durability::kDeferred);
  CHECK(commit.journal_done == 4);
  CHECK(commit.durability == Durability::kDeferred);
  CHECK(commit.remove.empty());
  REQUIRE(commit.put.size() == 1);
  const ResourceState& rs = commit.put[0];
  CHECK(rs.address == "instance.web");
  CHECK(rs.kind == "instance");
  CHECK(rs.id == "i-1");
  CHECK(rs.attributes["id"] == "i-1");
  CHECK(rs.attributes["status"] == "running");
  CHECK(rs.depends_on == std::vector<std::string>{"network.core"});
  CHECK(rs.tainted.empty());
}

TEST_CASE("recorder: a resource whose wait saw it fail is recorded, tainted") {
  PlannedChange c = Change("instance.web", Action::kCreate);
  WaitResponse failed;
  failed.status = Status::FailedPrecondition("failed");
  failed.failed_reason = "provisioning_failed";
  RemoteResource remote{"instance", "i-1", Value::object()};
  CHECK(
      ResultCommit(c, Action::kCreate, 1, remote, failed, Durability::kImmediate).put[0].tainted ==
      "provisioning failed: provisioning_failed");
  CHECK(
      ResultCommit(c, Action::kUpdate, 1, remote, failed, Durability::kImmediate).put[0].tainted ==
      "failed after an update: provisioning_failed");
  // A wait that timed out leaves a resource that may still become ready.
  WaitResponse timed_out;
  timed_out.status = Status::DeadlineExceeded("timeout");
  CHECK(ResultCommit(c, Action::kCreate, 1, remote, timed_out, Durability::kImmediate)
            .put[0]
            .tainted.empty());
}

TEST_CASE("recorder: the create of a create then delete replace keeps the old object, deposed") {
  PlannedChange c = Change("instance.web", Action::kReplace);
  c.replace_order = ReplaceOrder::kCreateThenDelete;
  c.remote_id = "i-old";
  c.before = {{"name", "web"}, {"id", "i-old"}};
  c.prior_depends_on = {"network.old"};
  RemoteResource remote{"instance", "i-new", {{"name", "web"}}};
  StateCommit commit =
      ResultCommit(c, Action::kCreate, 2, remote, WaitResponse{}, Durability::kDeferred);
  REQUIRE(commit.put.size() == 2);
  CHECK(commit.put[0].id == "i-new");
  CHECK(commit.put[0].address == "instance.web");
  const ResourceState& old = commit.put[1];
  CHECK(old.address == DeposedKey(c));
  CHECK(old.id == "i-old");
  CHECK(old.attributes == c.before);
  CHECK(old.depends_on == std::vector<std::string>{"network.old"});
}

TEST_CASE("recorder: a delete removes the record it deleted, and an update's delete nothing") {
  SECTION("a delete") {
    PlannedChange c = Change("instance.web", Action::kDelete);
    StateCommit commit = DeleteCommit(c, false, 3);
    CHECK(commit.journal_done == 3);
    CHECK(commit.remove == std::vector<std::string>{"instance.web"});
    CHECK(commit.durability == Durability::kImmediate);
  }
  SECTION("the delete of a replace") {
    PlannedChange c = Change("instance.web", Action::kReplace);
    CHECK(DeleteCommit(c, false, 3).remove == std::vector<std::string>{"instance.web"});
  }
  SECTION("the delete of a deposed object") {
    PlannedChange c = Change("instance.web", Action::kReplace);
    c.replace_order = ReplaceOrder::kCreateThenDelete;
    CHECK(DeleteCommit(c, true, 3).remove == std::vector<std::string>{DeposedKey(c)});
  }
  SECTION("anything else only completes its journal entry") {
    PlannedChange c = Change("instance.web", Action::kUpdate);
    StateCommit commit = DeleteCommit(c, false, 3);
    CHECK(commit.remove.empty());
    CHECK(commit.journal_done == 3);
  }
}

TEST_CASE(
    "recorder: RecordCommit completes the journal entry, or leaves it when the commit fails") {
  MemoryStateStore store;
  REQUIRE(store.Load().ok());
  auto seq = store.ReserveSequences(2);
  REQUIRE(seq.ok());
  JournalEntry a;
  a.seq = *seq;
  a.address = "instance.web";
  JournalEntry b = a;
  b.seq = *seq + 1;
  b.address = "instance.db";
  REQUIRE(store.JournalBeginAll(std::vector<JournalEntry>{a, b}).ok());
  PlannedChange c = Change("instance.web", Action::kCreate);
  RemoteResource remote{"instance", "i-1", Value::object()};
  REQUIRE(RecordCommit(store,
                       ResultCommit(c, Action::kCreate, a.seq, remote, {}, Durability::kDeferred),
                       false)
              .ok());
  store.FailNextCommit(Status::Unavailable("injected"));
  PlannedChange d = Change("instance.db", Action::kCreate);
  CHECK_FALSE(
      RecordCommit(
          store, ResultCommit(d, Action::kCreate, b.seq, remote, {}, Durability::kDeferred), false)
          .ok());
  auto state = store.Load();
  REQUIRE(state.ok());
  CHECK(state->resources.count("instance.web") == 1);
  CHECK(state->resources.count("instance.db") == 0);
  auto pending = store.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK((*pending)[0].seq == b.seq);  // stands for the operation still
}

TEST_CASE("record queue: deferred commits are handed over in order, up to its capacity") {
  RecordQueue q(2);
  CHECK_FALSE(q.ShouldWake());
  CHECK_FALSE(q.busy());
  CHECK(q.HandOff(5, Durability::kDeferred));
  CHECK(q.HandOff(3, Durability::kDeferred));
  CHECK_FALSE(q.HandOff(7, Durability::kDeferred));  // a worker's worth behind: the worker commits
  CHECK(q.ShouldWake());
  CHECK(q.busy());
  CHECK(q.TakeNext() == 5);
  CHECK(q.HandOff(7, Durability::kDeferred));  // room again, though 5 is not complete yet
  CHECK(q.TakeNext() == 3);
  CHECK(q.TakeNext() == 7);
  CHECK_FALSE(q.has_next());
  q.Recorded();
  q.Recorded();
  CHECK(q.busy());  // one still being committed
  q.Recorded();
  CHECK_FALSE(q.busy());
}

TEST_CASE("record queue: a commit that must be synced stays with the worker") {
  RecordQueue q(4);
  CHECK_FALSE(q.HandOff(1, Durability::kImmediate));
  CHECK_FALSE(q.busy());
  CHECK_FALSE(q.has_next());
}

TEST_CASE("record queue: the recorder wakes to leave once the workers have gone") {
  RecordQueue q(1);
  CHECK(q.HandOff(0, Durability::kDeferred));
  q.WorkersGone();
  CHECK(q.ShouldWake());
  CHECK(q.has_next());  // what the workers left is recorded first
  (void)q.TakeNext();
  CHECK(q.ShouldWake());
  CHECK_FALSE(q.has_next());  // then it leaves
}

}  // namespace apply_recorder_test
