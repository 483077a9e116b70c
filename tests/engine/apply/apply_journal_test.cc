// JournalBatcher alone: when ready operations are journaled ahead, how many
// at once, and the entries it writes.
#include "engine/apply/apply_journal.h"

#include <catch2/catch.hpp>

#include "engine/apply/apply.h"
#include "engine/state/memory_state_store.h"

namespace apply_journal_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

// `n` independent nodes, network.a0 ... (all ready at once).
struct Independent {
  std::vector<PlannedChange> changes;
  ApplyGraph graph;
  explicit Independent(int n) {
    for (int i = 0; i < n; ++i) {
      changes.push_back(PlannedChange{.address = "network.a" + std::to_string(i)});
    }
    for (const PlannedChange& c : changes) graph.nodes.push_back(ApplyNode{&c});
  }
};

}  // namespace

TEST_CASE("journal batcher: low water is half the workers, the target one and a half times") {
  CHECK(JournalBatcher(1).low_water() == 0);
  CHECK(JournalBatcher(1).target() == 1);
  CHECK(JournalBatcher(4).low_water() == 2);
  CHECK(JournalBatcher(4).target() == 6);
  CHECK(JournalBatcher(10).target() == 15);
}

TEST_CASE("journal batcher: a worker with nothing to send journals up to the target, in order") {
  Independent g(10);
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(4);
  REQUIRE(batcher.MayJournal(walk));
  std::vector<size_t> chunk = batcher.TakeChunk(walk, false);
  CHECK(chunk == std::vector<size_t>{0, 1, 2, 3, 4, 5});  // by address: a0 .. a5
  CHECK(batcher.writing());
  // One chunk at a time: no other until this one is written.
  CHECK_FALSE(batcher.MayJournal(walk));
  CHECK(batcher.TakeChunk(walk, false).empty());
  batcher.Written(chunk);
  CHECK_FALSE(batcher.writing());
  // The target is journaled: nothing more until some are taken.
  CHECK_FALSE(batcher.MayJournal(walk));
  for (size_t expected : chunk) {
    REQUIRE(batcher.has_journaled());
    CHECK(batcher.TakeJournaled() == expected);
  }
  CHECK_FALSE(batcher.has_journaled());
}

TEST_CASE("journal batcher: a worker that sends journals ahead only below low water") {
  Independent g(20);
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(4);  // low water 2, target 6
  batcher.Written(batcher.TakeChunk(walk, false));
  (void)batcher.TakeJournaled();  // 5 journaled left
  CHECK(batcher.TakeChunk(walk, true).empty());
  for (int i = 0; i < 3; ++i) (void)batcher.TakeJournaled();  // 2 left: not below
  CHECK(batcher.TakeChunk(walk, true).empty());
  (void)batcher.TakeJournaled();  // 1 left
  std::vector<size_t> chunk = batcher.TakeChunk(walk, true);
  CHECK(chunk.size() == 5);  // back up to the target
}

TEST_CASE("journal batcher: one worker journals one operation at a time, before it runs") {
  Independent g(3);
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(1);
  std::vector<size_t> chunk = batcher.TakeChunk(walk, false);
  CHECK(chunk == std::vector<size_t>{0});
  batcher.Written(chunk);
  CHECK_FALSE(batcher.MayJournal(walk));
  CHECK(batcher.TakeJournaled() == 0);
  CHECK(batcher.TakeChunk(walk, true).empty());  // never while sending
  CHECK(batcher.TakeChunk(walk, false) == std::vector<size_t>{1});
}

TEST_CASE("journal batcher: with the target journaled and nothing sent, it takes no chunk") {
  // The hang once seen with --max-pending: a worker woken to journal with
  // the queue full took the chunk slot with nothing in it, and nothing was
  // journaled again.
  Independent g(30);
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(4);
  batcher.Written(batcher.TakeChunk(walk, false));
  REQUIRE(walk.has_ready());
  CHECK_FALSE(batcher.MayJournal(walk));
  CHECK(batcher.TakeChunk(walk, false).empty());
  CHECK_FALSE(batcher.writing());
}

TEST_CASE("journal batcher: a chunk whose write failed offers nothing and frees the slot") {
  Independent g(3);
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(2);
  std::vector<size_t> chunk = batcher.TakeChunk(walk, false);
  REQUIRE(chunk.size() == 3);
  batcher.Written({});
  CHECK_FALSE(batcher.writing());
  CHECK_FALSE(batcher.has_journaled());
}

TEST_CASE("journal batcher: operations journaled already are offered as they are") {
  Independent g(2);
  for (ApplyNode& n : g.graph.nodes) n.journaled = JournalEntry{};
  ApplyWalk walk(g.graph);
  JournalBatcher batcher(2);
  CHECK_FALSE(batcher.MayJournal(walk));  // never ready in the walk
  batcher.Offer(1);
  batcher.Offer(0);
  CHECK(batcher.journaled() == std::deque<size_t>{1, 0});
  CHECK(batcher.TakeJournaled() == 1);
}

TEST_CASE("journal batcher: Write journals the entries in one write, pending until committed") {
  MemoryStateStore store;
  REQUIRE(store.Load().ok());
  auto first = store.ReserveSequences(2);
  REQUIRE(first.ok());
  std::vector<JournalEntry> entries(2);
  entries[0].seq = *first;
  entries[0].address = "network.a";
  entries[1].seq = *first + 1;
  entries[1].address = "network.b";
  REQUIRE(JournalBatcher::Write(store, entries).ok());
  auto pending = store.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 2);
  CHECK((*pending)[0].address == "network.a");
  CHECK((*pending)[1].address == "network.b");
}

TEST_CASE("journal entry: the request as prepared, its key, and what recovery needs") {
  PlannedChange c;
  c.address = "instance.web";
  c.parsed_address = *ResourceAddress::Parse("instance.web");
  c.kind = "instance";
  c.action = Action::kCreate;
  c.depends_on = {"network.core"};
  PreparedMutation prepared{"instance",        Action::kCreate,     "POST",
                            "/api/v1/compute", R"({"name":"web"})", ""};
  JournalEntry e = JournalEntryFor(c, Action::kCreate, false, 7, "lin", prepared, 1700000000);
  CHECK(e.seq == 7);
  CHECK(e.address == "instance.web");
  CHECK(e.action == Action::kCreate);
  CHECK(e.kind == "instance");
  CHECK(e.remote_id.empty());
  CHECK(e.method == "POST");
  CHECK(e.path == "/api/v1/compute");
  CHECK(e.body == R"({"name":"web"})");
  CHECK(e.idempotency_key == IdempotencyKey("lin", 7, Action::kCreate, "instance.web"));
  CHECK(e.started_at == 1700000000);
  CHECK(e.context == Value{{"depends_on", {"network.core"}}});

  SECTION("a create that deposes the old object names it") {
    c.action = Action::kReplace;
    c.replace_order = ReplaceOrder::kCreateThenDelete;
    c.remote_id = "i-1";
    JournalEntry r = JournalEntryFor(c, Action::kCreate, false, 8, "lin", prepared, 0);
    CHECK(r.remote_id.empty());
    CHECK(r.context["deposes"] == "i-1");
    SECTION("and the delete of the deposed object is journaled at its deposed key") {
      PreparedMutation del{"instance", Action::kDelete, "DELETE", "/api/v1/compute/i-1", "", "i-1"};
      JournalEntry d = JournalEntryFor(c, Action::kDelete, true, 9, "lin", del, 0);
      CHECK(d.address == DeposedKey(c));
      CHECK(d.address != c.address);
      CHECK(d.remote_id == "i-1");
      CHECK_FALSE(d.context.contains("deposes"));
      // The key is the change's, whichever object it deletes.
      CHECK(d.idempotency_key == IdempotencyKey("lin", 9, Action::kDelete, "instance.web"));
    }
  }
}

}  // namespace apply_journal_test
