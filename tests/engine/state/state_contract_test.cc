// The StateStore contract, run unchanged against the in-memory, SQLite and
// PostgreSQL stores, the last two both plain and encrypted. The PostgreSQL cases are hidden ([.])
// from the default run and executed by the CTest entry "engine: state on PostgreSQL", which wraps
// the test binary in pg_harness.sh (a throwaway server).
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "tests/engine/state/state_test_support.h"

namespace state_contract_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using namespace std::chrono_literals;

#define STATE_CONTRACT_TEST(name, title)                                      \
  static void name(StoreFactory& f, HookedClock& clock);                      \
  TEST_CASE("state contract (memory): " title, "[state]") {                   \
    HookedClock clock;                                                        \
    MemoryFactory f(&clock);                                                  \
    name(f, clock);                                                           \
  }                                                                           \
  TEST_CASE("state contract (sqlite): " title, "[state]") {                   \
    HookedClock clock;                                                        \
    SqliteFactory f(&clock);                                                  \
    name(f, clock);                                                           \
  }                                                                           \
  TEST_CASE("state contract (sqlite encrypted): " title, "[state]") {         \
    HookedClock clock;                                                        \
    EncryptedSqliteFactory f(&clock);                                         \
    name(f, clock);                                                           \
  }                                                                           \
  TEST_CASE("state contract (postgres): " title, "[.][postgres]") {           \
    HookedClock clock;                                                        \
    PostgresFactory f(&clock);                                                \
    name(f, clock);                                                           \
  }                                                                           \
  TEST_CASE("state contract (postgres encrypted): " title, "[.][postgres]") { \
    HookedClock clock;                                                        \
    PostgresFactory f(&clock, /*encrypted=*/true);                            \
    name(f, clock);                                                           \
  }                                                                           \
  static void name(StoreFactory& f, [[maybe_unused]] HookedClock& clock)

namespace {

ResourceState Resource(const std::string& address, const std::string& id, Value attrs = {}) {
  ResourceState r;
  r.address = address;
  r.kind = address.substr(0, address.find('.'));
  r.id = id;
  r.attributes = attrs.is_null() ? Value::object() : std::move(attrs);
  return r;
}

StateSnapshot MustLoad(StateStore& s) {
  auto snap = s.Load();
  INFO(snap.status().ToString());
  REQUIRE(snap.ok());
  return std::move(*snap);
}

}  // namespace

STATE_CONTRACT_TEST(LoadCreatesLineage, "load creates a lineage at serial 0") {
  StateSnapshot a = MustLoad(f.store());
  CHECK(a.lineage.size() == 36);
  CHECK(a.lineage[14] == '4');  // a version 4 UUID
  CHECK(a.serial == 0);
  CHECK(a.resources.empty());
  CHECK(a.outputs.empty());
  CHECK(MustLoad(f.store()).lineage == a.lineage);
  if (auto other = f.Reopen()) CHECK(MustLoad(*other).lineage == a.lineage);
}

STATE_CONTRACT_TEST(Taint, "a tainted resource keeps its reason until it is put healthy again") {
  StateStore& s = f.store();
  StateCommit failed;
  failed.put = {Resource("network.core", "net-1", {{"cidr", "10.0.0.0/16"}})};
  failed.put[0].tainted = "provisioning failed: provisioning_failed";
  REQUIRE(s.Commit(failed).ok());
  CHECK(MustLoad(s).resources.at("network.core").tainted ==
        "provisioning failed: provisioning_failed");
  if (auto other = f.Reopen()) {
    CHECK(MustLoad(*other).resources.at("network.core").tainted ==
          "provisioning failed: provisioning_failed");
  }
  StateCommit healthy;
  healthy.put = {Resource("network.core", "net-2", {{"cidr", "10.0.0.0/16"}})};
  REQUIRE(s.Commit(healthy).ok());
  CHECK(MustLoad(s).resources.at("network.core").tainted.empty());
}

STATE_CONTRACT_TEST(RecordedKinds, "the recorded kinds are those of the resources it holds") {
  StateStore& s = f.store();
  REQUIRE(s.Load().ok());
  auto none = s.RecordedKinds();
  REQUIRE(none.ok());
  CHECK(none->empty());
  StateCommit first;
  first.put = {Resource("network.core", "net-1"), Resource("instance.web[0]", "i-1"),
               Resource("instance.web[1]", "i-2")};
  REQUIRE(s.Commit(first).ok());
  auto kinds = s.RecordedKinds();
  REQUIRE(kinds.ok());
  CHECK(*kinds == std::set<std::string>{"instance", "network"});
  StateCommit second;
  second.remove = {"network.core"};
  REQUIRE(s.Commit(second).ok());
  CHECK(*s.RecordedKinds() == std::set<std::string>{"instance"});
  if (auto other = f.Reopen()) CHECK(*other->RecordedKinds() == std::set<std::string>{"instance"});
}

STATE_CONTRACT_TEST(CommitAtomic, "commit puts, removes and moves atomically, serial +1") {
  StateStore& s = f.store();
  StateCommit first;
  first.put = {Resource("network.core", "net-1", {{"cidr", "10.0.0.0/16"}}),
               Resource("instance.web", "i-1", {{"plan", "s-1vcpu-1gb"}, {"tags", {"a", "b"}}}),
               Resource("ssh_key.old", "k-1")};
  first.put[1].depends_on = {"network.core"};
  auto serial = s.Commit(first);
  REQUIRE(serial.ok());
  CHECK(*serial == 1);

  StateCommit second;
  second.moves = {{"instance.web", "instance.web[0]"}};
  second.put = {Resource("instance.web[0]", "i-1", {{"plan", "s-2vcpu-4gb"}})};
  second.remove = {"ssh_key.old"};
  second.outputs = std::map<std::string, Value>{{"ip", "10.0.0.5"}, {"n", 2}};
  second.sensitive_outputs = {"ip"};
  serial = s.Commit(second);
  REQUIRE(serial.ok());
  CHECK(*serial == 2);

  StateSnapshot snap = MustLoad(s);
  CHECK(snap.serial == 2);
  REQUIRE(snap.resources.size() == 2);
  CHECK(snap.resources.count("instance.web") == 0);
  CHECK(snap.resources.count("ssh_key.old") == 0);
  const ResourceState& web = snap.resources.at("instance.web[0]");
  CHECK(web.address == "instance.web[0]");
  CHECK(web.id == "i-1");
  CHECK(web.attributes == Value{{"plan", "s-2vcpu-4gb"}});
  CHECK(snap.resources.at("network.core").attributes["cidr"] == "10.0.0.0/16");
  CHECK(snap.outputs.at("ip") == "10.0.0.5");
  CHECK(snap.outputs.at("n") == 2);
  CHECK(snap.sensitive_outputs == std::set<std::string>{"ip"});

  // A move that cannot apply refuses the whole commit: nothing changes.
  StateCommit bad;
  bad.put = {Resource("volume.data", "v-1")};
  bad.remove = {"network.core"};
  bad.moves = {{"instance.missing", "instance.other"}};
  auto r = s.Commit(bad);
  CHECK(r.status().code() == StatusCode::kNotFound);
  bad.moves = {{"instance.web[0]", "network.core"}};
  CHECK(s.Commit(bad).status().code() == StatusCode::kAlreadyExists);
  // So does a journal entry that is not pending.
  StateCommit not_pending;
  not_pending.put = {Resource("volume.data", "v-1")};
  not_pending.journal_done = 999;
  CHECK(s.Commit(not_pending).status().code() == StatusCode::kNotFound);
  // And unknown values never reach state.
  StateCommit unknown;
  unknown.put = {Resource("volume.data", "v-1", {{"size", UnknownValue()}})};
  CHECK(s.Commit(unknown).status().code() == StatusCode::kInvalidArgument);

  StateSnapshot after = MustLoad(s);
  CHECK(after.serial == 2);
  CHECK(after.resources.size() == 2);
  CHECK(after.resources.count("volume.data") == 0);
  CHECK(after.resources.count("network.core") == 1);

  // Outputs are replaced only when given; an empty commit still bumps once.
  serial = s.Commit(StateCommit{});
  REQUIRE(serial.ok());
  CHECK(*serial == 3);
  CHECK(MustLoad(s).outputs.size() == 2);
  StateCommit clear_outputs;
  clear_outputs.outputs = std::map<std::string, Value>{};
  REQUIRE(s.Commit(clear_outputs).ok());
  CHECK(MustLoad(s).outputs.empty());
}

STATE_CONTRACT_TEST(Journal, "journal entries are pending until their commit clears them") {
  StateStore& s = f.store();
  auto a = s.ReserveSequences(1);
  auto b = s.ReserveSequences(1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // The exact bytes, NULs and non-UTF-8 included.
  const std::string body_a = std::string("{\"name\":\"web\"}\0\xff\xfe tail", 22);
  const std::string body_b = "{\"name\":\"api\",\"plan\":\"s-1vcpu-1gb\"}";
  REQUIRE(s.JournalBegin(TestJournalEntry(*a, "instance.web", body_a)).ok());
  REQUIRE(s.JournalBegin(TestJournalEntry(*b, "instance.api", body_b)).ok());
  CHECK(s.JournalBegin(TestJournalEntry(*a, "instance.web", body_a)).code() ==
        StatusCode::kAlreadyExists);
  CHECK(s.JournalBegin(TestJournalEntry(0, "instance.web", body_a)).code() ==
        StatusCode::kInvalidArgument);
  CHECK(MustLoad(s).serial == 0);  // the journal does not move the serial

  auto pending = s.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 2);
  const JournalEntry& e = (*pending)[0];
  CHECK(e.seq == *a);
  CHECK(e.address == "instance.web");
  CHECK(e.action == Action::kCreate);
  CHECK(e.kind == "instance");
  CHECK(e.remote_id.empty());
  CHECK(e.method == "POST");
  CHECK(e.path == "/api/v1/instances");
  CHECK(e.body == body_a);
  CHECK(e.body.size() == 22);
  CHECK(e.idempotency_key == "lineage-" + std::to_string(*a));
  CHECK(e.started_at == 1'700'000'123);
  CHECK(e.context == Value{{"depends_on", Value::array({"network.core"})}});
  CHECK((*pending)[1].body == body_b);

  StateCommit done;
  done.put = {Resource("instance.web", "i-9")};
  done.journal_done = *a;
  auto serial = s.Commit(done);
  REQUIRE(serial.ok());
  CHECK(*serial == 1);
  pending = s.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK((*pending)[0].seq == *b);
  // Clearing twice is a bug the store reports, without applying anything.
  CHECK(s.Commit(done).status().code() == StatusCode::kNotFound);
  CHECK(MustLoad(s).serial == 1);
  if (auto other = f.Reopen()) {
    auto again = other->PendingJournal();
    REQUIRE(again.ok());
    REQUIRE(again->size() == 1);
    CHECK((*again)[0].body == body_b);
  }
}

STATE_CONTRACT_TEST(JournalBeginAll, "several journal entries are written all or none") {
  StateStore& s = f.store();
  auto first = s.ReserveSequences(4);
  REQUIRE(first.ok());
  const int64_t a = *first, b = a + 1, c = a + 2, d = a + 3;
  CHECK(s.JournalBeginAll({}).ok());  // nothing to write
  REQUIRE(s.JournalBegin(TestJournalEntry(c, "instance.c", "{\"c\":1}")).ok());

  // One entry already pending: nothing of the batch is written.
  std::vector<JournalEntry> clash = {TestJournalEntry(a, "instance.a", "{}"),
                                     TestJournalEntry(c, "instance.c", "{}")};
  CHECK(s.JournalBeginAll(clash).code() == StatusCode::kAlreadyExists);
  // A sequence number given twice, or an invalid entry: refused whole.
  std::vector<JournalEntry> twice = {TestJournalEntry(a, "instance.a", "{}"),
                                     TestJournalEntry(a, "instance.b", "{}")};
  CHECK(s.JournalBeginAll(twice).code() == StatusCode::kAlreadyExists);
  std::vector<JournalEntry> invalid = {TestJournalEntry(a, "instance.a", "{}"),
                                       TestJournalEntry(b, "", "{}")};
  CHECK(s.JournalBeginAll(invalid).code() == StatusCode::kInvalidArgument);
  auto pending = s.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK((*pending)[0].seq == c);

  std::vector<JournalEntry> batch = {TestJournalEntry(d, "instance.d", "{\"d\":1}"),
                                     TestJournalEntry(a, "instance.a", "{\"a\":1}"),
                                     TestJournalEntry(b, "instance.b", "{\"b\":1}")};
  REQUIRE(s.JournalBeginAll(batch).ok());
  CHECK(MustLoad(s).serial == 0);
  auto check = [&](StateStore& store) {
    auto all = store.PendingJournal();
    REQUIRE(all.ok());
    REQUIRE(all->size() == 4);
    std::vector<int64_t> seqs;
    for (const JournalEntry& e : *all) seqs.push_back(e.seq);
    CHECK(seqs == std::vector<int64_t>{a, b, c, d});
    CHECK((*all)[0].address == "instance.a");
    CHECK((*all)[0].body == "{\"a\":1}");
    CHECK((*all)[3].address == "instance.d");
    CHECK((*all)[3].body == "{\"d\":1}");
  };
  check(s);
  if (auto other = f.Reopen()) check(*other);
}

STATE_CONTRACT_TEST(Sequence, "ReserveSequences(1) is strictly increasing and durable") {
  int64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    auto n = f.store().ReserveSequences(1);
    REQUIRE(n.ok());
    CHECK(*n > last);
    last = *n;
  }
  if (auto other = f.Reopen()) {
    auto n = other->ReserveSequences(1);
    REQUIRE(n.ok());
    CHECK(*n > last);
    last = *n;
    auto m = f.store().ReserveSequences(1);  // and the first handle sees it too
    REQUIRE(m.ok());
    CHECK(*m > last);
  }
}

STATE_CONTRACT_TEST(ReserveSequences,
                    "ReserveSequences hands out consecutive blocks above every earlier number") {
  StateStore& s = f.store();
  auto before = s.ReserveSequences(1);
  REQUIRE(before.ok());
  auto block = s.ReserveSequences(5);
  REQUIRE(block.ok());
  CHECK(*block > *before);
  auto after = s.ReserveSequences(1);
  REQUIRE(after.ok());
  CHECK(*after == *block + 5);  // the block's five numbers are its own
  CHECK(s.ReserveSequences(0).status().code() == StatusCode::kInvalidArgument);
  CHECK(s.ReserveSequences(-3).status().code() == StatusCode::kInvalidArgument);
  if (auto other = f.Reopen()) {
    auto theirs = other->ReserveSequences(3);
    REQUIRE(theirs.ok());
    CHECK(*theirs > *after);
    auto mine = s.ReserveSequences(1);  // and the first handle sees their block taken
    REQUIRE(mine.ok());
    CHECK(*mine >= *theirs + 3);
  }
}

STATE_CONTRACT_TEST(LoadSequence, "load reports the last sequence number handed out") {
  StateStore& s = f.store();
  CHECK(MustLoad(s).sequence == 0);
  auto block = s.ReserveSequences(4);
  REQUIRE(block.ok());
  CHECK(MustLoad(s).sequence == *block + 3);
  if (auto other = f.Reopen()) CHECK(MustLoad(*other).sequence == *block + 3);
}

STATE_CONTRACT_TEST(Restore,
                    "a restore replaces the lineage and raises serial and sequence, never lowers") {
  StateStore& s = f.store();
  StateCommit first;
  first.put = {Resource("network.a", "net-a"), Resource("network.b", "net-b")};
  REQUIRE(s.Commit(first).ok());
  REQUIRE(s.ReserveSequences(5).ok());
  const StateSnapshot before = MustLoad(s);

  // A state pulled at serial 100, sequence 3: the serial jumps to it, the
  // sequence counter stays ahead of both.
  StateCommit restore;
  restore.put = {Resource("network.c", "net-c")};
  restore.remove = {"network.a"};
  restore.outputs = std::map<std::string, Value>{{"ip", "10.0.0.1"}};
  restore.restore = StateRestore{"11111111-1111-4111-8111-111111111111", 100, 3};
  auto serial = s.Commit(restore);
  INFO(serial.status().ToString());
  REQUIRE(serial.ok());
  CHECK(*serial == 100);
  StateSnapshot after = MustLoad(s);
  CHECK(after.lineage == "11111111-1111-4111-8111-111111111111");
  CHECK(after.serial == 100);
  CHECK(after.sequence == before.sequence);
  CHECK(after.resources.count("network.a") == 0);
  CHECK(after.resources.count("network.b") == 1);
  CHECK(after.resources.at("network.c").id == "net-c");
  CHECK(after.outputs.at("ip") == "10.0.0.1");

  // An older serial still moves forward; a larger sequence is taken.
  restore = StateCommit{};
  restore.restore = StateRestore{"22222222-2222-4222-8222-222222222222", 1, 50};
  REQUIRE(*s.Commit(restore) == 101);
  CHECK(MustLoad(s).sequence == 50);
  CHECK(*s.ReserveSequences(1) == 51);
  if (auto other = f.Reopen()) {
    StateSnapshot seen = MustLoad(*other);
    CHECK(seen.lineage == "22222222-2222-4222-8222-222222222222");
    CHECK(seen.serial == 101);
    CHECK(seen.sequence == 51);
  }

  // Malformed: refused whole.
  StateCommit bad;
  bad.put = {Resource("network.d", "net-d")};
  bad.restore = StateRestore{"", 0, 0};
  CHECK(s.Commit(bad).status().code() == StatusCode::kInvalidArgument);
  bad.restore = StateRestore{"33333333-3333-4333-8333-333333333333", -1, 0};
  CHECK(s.Commit(bad).status().code() == StatusCode::kInvalidArgument);
  CHECK(MustLoad(s).resources.count("network.d") == 0);
  CHECK(MustLoad(s).serial == 101);
}

STATE_CONTRACT_TEST(DeferredCommit,
                    "a deferred commit is atomic, visible at once and kept by later writes") {
  StateStore& s = f.store();
  auto seq = s.ReserveSequences(1);
  REQUIRE(seq.ok());
  REQUIRE(s.JournalBegin(TestJournalEntry(*seq, "instance.web", "{}")).ok());
  StateCommit done;
  done.put = {Resource("instance.web", "i-1")};
  done.journal_done = *seq;
  done.durability = Durability::kDeferred;
  auto serial = s.Commit(done);
  REQUIRE(serial.ok());
  CHECK(*serial == 1);
  StateSnapshot snap = MustLoad(s);
  CHECK(snap.resources.count("instance.web") == 1);
  CHECK(s.PendingJournal()->empty());
  if (auto other = f.Reopen()) {  // another handle sees it before any sync
    CHECK(MustLoad(*other).resources.at("instance.web").id == "i-1");
    CHECK(other->PendingJournal()->empty());
  }
  // A deferred commit that fails leaves nothing behind, like any other.
  StateCommit bad;
  bad.put = {Resource("instance.db", "i-2")};
  bad.journal_done = *seq;  // no longer pending
  bad.durability = Durability::kDeferred;
  CHECK(s.Commit(bad).status().code() == StatusCode::kNotFound);
  REQUIRE(s.Sync().ok());  // makes it durable; nothing else changes
  CHECK(MustLoad(s).serial == 1);
  StateCommit outputs;
  outputs.outputs = std::map<std::string, Value>{{"ip", "10.0.0.1"}};
  REQUIRE(s.Commit(outputs).ok());  // kImmediate: syncs what came before
  if (auto other = f.Reopen()) {
    StateSnapshot later = MustLoad(*other);
    CHECK(later.serial == 2);
    CHECK(later.resources.count("instance.web") == 1);
    CHECK(later.resources.count("instance.db") == 0);
    CHECK(later.outputs.at("ip") == "10.0.0.1");
  }
}

STATE_CONTRACT_TEST(LockConflict, "a held lock is a Conflict naming holder, operation and time") {
  StateStore& s = f.store();
  auto none = s.CurrentLock();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto held = s.Lock("apply", 0ms);
  INFO(held.status().ToString());
  REQUIRE(held.ok());
  CHECK(held->operation == "apply");
  CHECK(held->holder == CurrentLockHolder());
  CHECK(held->created_at == clock.UnixSeconds());
  CHECK(held->id.size() == 36);

  auto current = s.CurrentLock();
  REQUIRE(current.ok());
  REQUIRE(current->has_value());
  CHECK((*current)->id == held->id);

  auto other = f.Reopen();
  StateStore& contender = other ? *other : s;
  auto second = contender.Lock("destroy", 0ms);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kConflict);
  const std::string& msg = second.status().message();
  CHECK(msg == "state is locked by " + held->holder + " (operation apply) since " +
                   FormatIsoTime(held->created_at) + " (lock ID " + held->id +
                   "); use --lock-timeout to wait, or 'cairn force-unlock " + held->id +
                   "' if that process is gone");
  CHECK(clock.sleeps() == 0);  // no wait asked, none done

  // Unlock needs the holder's id.
  CHECK(contender.Unlock("not-the-id").code() == StatusCode::kConflict);
  REQUIRE(s.Unlock(held->id).ok());
  CHECK(s.Unlock(held->id).code() == StatusCode::kNotFound);
  auto after = contender.CurrentLock();
  REQUIRE(after.ok());
  CHECK_FALSE(after->has_value());
  auto retaken = contender.Lock("destroy", 0ms);
  REQUIRE(retaken.ok());
  CHECK(retaken->id != held->id);
}

STATE_CONTRACT_TEST(LockWait, "a waiting Lock succeeds once the holder releases") {
  StateStore& s = f.store();
  auto held = s.Lock("apply", 0ms);
  REQUIRE(held.ok());
  auto other = f.Reopen();
  StateStore& waiter = other ? *other : s;

  // Released after the waiter's third sleep.
  clock.on_sleep = [&](int sleeps) {
    if (sleeps == 3) REQUIRE(s.Unlock(held->id).ok());
  };
  auto got = waiter.Lock("destroy", 60s);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(got->operation == "destroy");
  CHECK(clock.sleeps() == 3);

  // Never released: a Conflict once the wait has passed (instantly, on the
  // manual clock).
  clock.on_sleep = nullptr;
  auto timed_out = s.Lock("apply", 5s);
  REQUIRE_FALSE(timed_out.ok());
  CHECK(timed_out.status().code() == StatusCode::kConflict);
  CHECK(Contains(timed_out.status().message(), "(operation destroy)"));
  CHECK(Contains(timed_out.status().message(), "(waited 5 s)"));
}

STATE_CONTRACT_TEST(ForceUnlock, "force-unlock takes the lock id, a wrong one is NotFound") {
  StateStore& s = f.store();
  CHECK(s.ForceUnlock("nothing-held").code() == StatusCode::kNotFound);
  auto held = s.Lock("apply", 0ms);
  REQUIRE(held.ok());
  Status wrong = s.ForceUnlock("0000-wrong");
  CHECK(wrong.code() == StatusCode::kNotFound);
  CHECK(Contains(wrong.message(), "0000-wrong"));
  auto still = s.CurrentLock();
  REQUIRE(still.ok());
  REQUIRE(still->has_value());
  CHECK((*still)->id == held->id);

  auto other = f.Reopen();
  StateStore& admin = other ? *other : s;
  REQUIRE(admin.ForceUnlock(held->id).ok());
  auto gone = s.CurrentLock();
  REQUIRE(gone.ok());
  CHECK_FALSE(gone->has_value());
}

STATE_CONTRACT_TEST(Reopen, "a reopened store sees everything") {
  if (!f.durable()) return;
  StateStore& s = f.store();
  const std::string lineage = MustLoad(s).lineage;
  StateCommit c;
  c.put = {Resource("network.core", "net-1", {{"cidr", "10.0.0.0/16"}, {"ratio", 0.25}})};
  c.put[0].depends_on = {"ssh_key.admin", "firewall.edge"};
  c.put[0].schema_version = 1;
  c.outputs = std::map<std::string, Value>{{"net", {{"id", "net-1"}}}};
  REQUIRE(s.Commit(c).ok());
  auto seq = s.ReserveSequences(1);
  REQUIRE(seq.ok());
  REQUIRE(s.JournalBegin(TestJournalEntry(*seq, "instance.web", "{\"x\":1}")).ok());
  auto held = s.Lock("apply", 0ms);
  REQUIRE(held.ok());

  auto other = f.Reopen();
  StateSnapshot snap = MustLoad(*other);
  CHECK(snap.lineage == lineage);
  CHECK(snap.serial == 1);
  REQUIRE(snap.resources.size() == 1);
  const ResourceState& net = snap.resources.at("network.core");
  CHECK(net.kind == "network");
  CHECK(net.id == "net-1");
  CHECK(net.attributes == Value{{"cidr", "10.0.0.0/16"}, {"ratio", 0.25}});
  CHECK(net.depends_on == std::vector<std::string>{"ssh_key.admin", "firewall.edge"});
  CHECK(net.schema_version == 1);
  CHECK(snap.outputs.at("net") == Value{{"id", "net-1"}});
  auto pending = other->PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK((*pending)[0].seq == *seq);
  auto lock = other->CurrentLock();
  REQUIRE(lock.ok());
  REQUIRE(lock->has_value());
  CHECK((*lock)->id == held->id);
  CHECK((*lock)->holder == held->holder);
  CHECK((*lock)->operation == "apply");
  CHECK((*lock)->created_at == held->created_at);
}

STATE_CONTRACT_TEST(Concurrent, "concurrent journal-then-commit from many threads loses nothing") {
  StateStore& s = f.store();
  constexpr int kThreads = 6;
  constexpr int kPerThread = 8;
  std::vector<std::string> errors(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const std::string address =
              "instance.w" + std::to_string(t) + "[" + std::to_string(i) + "]";
          auto seq = s.ReserveSequences(1);
          if (!seq.ok()) {
            errors[t] = seq.status().ToString();
            return;
          }
          Status begun = s.JournalBegin(TestJournalEntry(*seq, address, "{}"));
          if (!begun.ok()) {
            errors[t] = begun.ToString();
            return;
          }
          StateCommit c;
          c.put = {Resource(address, "i-" + std::to_string(*seq))};
          c.journal_done = *seq;
          // Half the threads defer: batches mix both kinds of write.
          c.durability = t % 2 == 0 ? Durability::kDeferred : Durability::kImmediate;
          auto serial = s.Commit(c);
          if (!serial.ok()) {
            errors[t] = serial.status().ToString();
            return;
          }
        }
      });
    }
  }
  for (const std::string& e : errors) CHECK(e.empty());
  StateSnapshot snap = MustLoad(s);
  CHECK(snap.serial == kThreads * kPerThread);
  CHECK(snap.resources.size() == kThreads * kPerThread);
  CHECK(s.PendingJournal()->empty());
}

}  // namespace state_contract_test
