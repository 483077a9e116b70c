#include "engine/state/memory_state_store.h"

#include <catch2/catch.hpp>

namespace memory_state_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

StateCommit PutOne(const std::string& address) {
  ResourceState r;
  r.address = address;
  r.kind = "instance";
  r.id = "i-" + address;
  StateCommit c;
  c.put.push_back(r);
  return c;
}

}  // namespace

TEST_CASE("memory state: FailNextCommit fails one commit and applies nothing", "[state]") {
  ManualClock clock;
  MemoryStateStore store(&clock);
  auto seq = store.ReserveSequences(1);
  JournalEntry e;
  e.seq = *seq;
  e.address = "instance.web";
  e.action = Action::kCreate;
  REQUIRE(store.JournalBegin(e).ok());

  store.FailNextCommit(Status::IOError("disk full"));
  StateCommit c = PutOne("instance.web");
  c.journal_done = *seq;
  auto failed = store.Commit(c);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == StatusCode::kIOError);
  CHECK(failed.status().message() == "disk full");
  CHECK(store.Load()->serial == 0);
  CHECK(store.Load()->resources.empty());
  CHECK(store.PendingJournal()->size() == 1);  // still in flight, as after a real failure

  auto ok = store.Commit(c);
  REQUIRE(ok.ok());
  CHECK(*ok == 1);
  CHECK(store.PendingJournal()->empty());
  CHECK(store.commit_attempts() == 2);
}

TEST_CASE("memory state: FailCommitsAfter lets n commits through, then fails", "[state]") {
  MemoryStateStore store;
  store.FailCommitsAfter(2);
  CHECK(store.Commit(PutOne("instance.a")).ok());
  CHECK(store.Commit(PutOne("instance.b")).ok());
  auto third = store.Commit(PutOne("instance.c"));
  REQUIRE_FALSE(third.ok());
  CHECK(third.status().code() == StatusCode::kUnavailable);
  CHECK(store.Commit(PutOne("instance.d")).status().code() == StatusCode::kUnavailable);
  StateSnapshot snap = *store.Load();
  CHECK(snap.serial == 2);
  CHECK(snap.resources.size() == 2);

  store.ClearFaults();
  CHECK(*store.Commit(PutOne("instance.c")) == 3);
}

TEST_CASE("memory state: an OK status given as a fault still fails the commit", "[state]") {
  MemoryStateStore store;
  store.FailNextCommit(Status::Ok());
  CHECK_FALSE(store.Commit(PutOne("instance.a")).ok());
  CHECK(store.Commit(PutOne("instance.a")).ok());
}

}  // namespace memory_state_store_test
