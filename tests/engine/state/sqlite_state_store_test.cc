// What only the SQLite store promises: file modes, the lock across processes,
// crash safety under SIGKILL, and format migrations. Children are forked and
// killed at arbitrary points; every assertion is about the state the parent
// finds afterwards, never about timing.
#include "engine/state/sqlite_state_store.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "tests/engine/state/state_test_support.h"

namespace sqlite_state_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using namespace std::chrono_literals;

namespace {

// Runs `body` in a forked child that _exits with its result (99 if it threw).
pid_t ForkChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 99;
    try {
      rc = body();
    } catch (...) {
    }
    _exit(rc);
  }
  REQUIRE(pid > 0);
  return pid;
}

// The child's exit code, or -signal.
int Reap(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::unique_ptr<SqliteStateStore> MustOpen(const std::string& path) {
  auto s = SqliteStateStore::Open(path);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

struct Pipe {
  Pipe() { REQUIRE(pipe(fds) == 0); }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  void CloseRead() {
    if (fds[0] >= 0) close(fds[0]);
    fds[0] = -1;
  }
  void CloseWrite() {
    if (fds[1] >= 0) close(fds[1]);
    fds[1] = -1;
  }
  // Blocks until the child writes a byte; false on EOF (the child exited).
  bool Wait() {
    char c;
    return read(fds[0], &c, 1) == 1;
  }
  void Signal() { (void)!write(fds[1], "x", 1); }
  int fds[2] = {-1, -1};
};

int Mode(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

void ExecSql(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  REQUIRE(rc == SQLITE_OK);
}

void WithRawDb(const std::string& path, const std::function<void(sqlite3*)>& f) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  f(db);
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("sqlite state: the directory is 0700 and the files 0600", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  CHECK(path == dir.path() + "/.cairn/state.db");
  auto store = MustOpen(path);
  REQUIRE(store->Commit(StateCommit{}).ok());
  CHECK(Mode(dir.path() + "/.cairn") == 0700);
  CHECK(Mode(path) == 0600);
  REQUIRE(std::filesystem::exists(path + "-wal"));
  CHECK(Mode(path + "-wal") == 0600);
}

TEST_CASE(
    "sqlite state: a symbolic link planted at the state's path is refused, its target untouched",
    "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  std::filesystem::create_directories(dir.path() + "/.cairn");
  const std::string victim = dir.path() + "/victim";
  {
    std::FILE* f = std::fopen(victim.c_str(), "w");
    REQUIRE(f);
    std::fputs("precious", f);
    std::fclose(f);
  }
  std::filesystem::create_symlink(victim, path);
  auto store = SqliteStateStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().message().find("symbolic link") != std::string::npos);
  CHECK(std::filesystem::file_size(victim) == 8);
}

TEST_CASE("sqlite state: OpenExisting opens only a state that exists, and creates nothing",
          "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  auto none = SqliteStateStore::OpenExisting(path);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kNotFound);
  CHECK(Contains(none.status().message(), path));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/.cairn"));

  // An empty file (an Open killed before its first transaction) is no state
  // either, and stays as it was.
  std::filesystem::create_directory(dir.path() + "/.cairn");
  WriteFile(path, "");
  auto empty = SqliteStateStore::OpenExisting(path);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kNotFound);
  CHECK(std::filesystem::file_size(path) == 0);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));

  auto made = MustOpen(path);
  StateCommit c;
  c.put.push_back(ResourceState{.address = "network.core", .kind = "network", .id = "net-1"});
  REQUIRE(made->Commit(c).ok());
  auto found = SqliteStateStore::OpenExisting(path);
  INFO(found.status().ToString());
  REQUIRE(found.ok());
  auto snap = (*found)->Load();
  REQUIRE(snap.ok());
  CHECK(snap->lineage == made->Load()->lineage);
  CHECK(snap->resources.count("network.core") == 1);
  // Still found once every handle is closed (the WAL checkpointed into the file).
  made.reset();
  found->reset();
  CHECK(SqliteStateStore::OpenExisting(path).ok());
}

TEST_CASE("sqlite state: deferred writes relax synchronous for their batch only", "[state]") {
  TempDir dir;
  auto store = MustOpen(SqliteStateStore::DefaultPath(dir.path()));
  CHECK(store->SynchronousIsFullForTesting());
  auto seq = store->ReserveSequences(3);  // deferred
  REQUIRE(seq.ok());
  CHECK(store->SynchronousIsFullForTesting());
  REQUIRE(store->JournalBegin(TestJournalEntry(*seq, "instance.web", "{}")).ok());  // immediate
  StateCommit c;
  c.journal_done = *seq;
  c.durability = Durability::kDeferred;
  REQUIRE(store->Commit(c).ok());
  CHECK(store->SynchronousIsFullForTesting());  // what Lock and Unlock run with
  REQUIRE(store->Sync().ok());
  REQUIRE(store->Sync().ok());  // nothing left to sync: a no-op
  auto lock = store->Lock("apply", 0ms);
  REQUIRE(lock.ok());
  CHECK(store->SynchronousIsFullForTesting());
  REQUIRE(store->Unlock(lock->id).ok());
  auto reopened = MustOpen(SqliteStateStore::DefaultPath(dir.path()));
  CHECK(reopened->PendingJournal()->empty());
  CHECK(*reopened->ReserveSequences(1) == *seq + 3);
}

TEST_CASE("sqlite state: of two processes racing for the lock, exactly one wins", "[state]") {
  // Even rounds race on a file that does not exist yet (creation and
  // migration race too); odd rounds on one that does.
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    const std::string path = SqliteStateStore::DefaultPath(dir.path());
    if (round % 2 == 1) MustOpen(path);
    Pipe gate;
    std::vector<pid_t> pids;
    for (int i = 0; i < 2; ++i) {
      pids.push_back(ForkChild([&] {
        gate.CloseWrite();
        char c;
        (void)!read(gate.fds[0], &c, 1);  // released together when the parent closes
        auto s = SqliteStateStore::Open(path);
        if (!s.ok()) {
          std::fprintf(stderr, "child: %s\n", s.status().ToString().c_str());
          return 4;
        }
        auto lock = (*s)->Lock("apply", 0ms);
        if (lock.ok()) return 0;
        return lock.status().code() == StatusCode::kConflict ? 3 : 5;
      }));
    }
    gate.CloseWrite();
    std::vector<int> codes;
    for (pid_t pid : pids) codes.push_back(Reap(pid));
    std::sort(codes.begin(), codes.end());
    INFO("round " << round);
    CHECK(codes == std::vector<int>{0, 3});

    auto store = MustOpen(path);
    auto held = store->CurrentLock();
    REQUIRE(held.ok());
    CHECK(held->has_value());
  }
}

TEST_CASE("sqlite state: a lock whose holder died is reported, never broken", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  MustOpen(path);
  Pipe ready;
  pid_t pid = ForkChild([&] {
    auto s = SqliteStateStore::Open(path);
    if (!s.ok() || !(*s)->Lock("apply", 0ms).ok()) return 4;
    ready.Signal();
    while (true) pause();
  });
  ready.CloseWrite();
  REQUIRE(ready.Wait());
  kill(pid, SIGKILL);
  CHECK(Reap(pid) == -SIGKILL);

  auto store = MustOpen(path);
  auto again = store->Lock("apply", 0ms);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kConflict);
  const std::string& msg = again.status().message();
  CHECK(Contains(msg, " pid " + std::to_string(pid) + " (boot "));
  CHECK(Contains(msg, ") (operation apply)"));
  CHECK(Contains(msg, "the holder process no longer runs on this host"));
  CHECK(Contains(msg, "cairn force-unlock"));
  auto held = store->CurrentLock();
  REQUIRE(held.ok());
  REQUIRE(held->has_value());
  REQUIRE(store->ForceUnlock((*held)->id).ok());
  CHECK(store->Lock("apply", 0ms).ok());
}

TEST_CASE("sqlite state: a journal entry survives SIGKILL before its commit", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  const std::string body = std::string("{\"name\":\"web\",\"plan\":\"s-1vcpu-1gb\"}\0\x01\xff", 39);
  Pipe ready;
  pid_t pid = ForkChild([&] {
    auto s = SqliteStateStore::Open(path);
    if (!s.ok()) return 4;
    auto seq = (*s)->ReserveSequences(1);
    if (!seq.ok()) return 5;
    JournalEntry e;
    e.seq = *seq;
    e.address = "instance.web";
    e.action = Action::kCreate;
    e.kind = "instance";
    e.method = "POST";
    e.path = "/api/v1/instances";
    e.body = body;
    e.idempotency_key = "key-" + std::to_string(*seq);
    e.started_at = 1'700'000'000;
    if (!(*s)->JournalBegin(e).ok()) return 6;
    ready.Signal();  // "the request left"; the commit never comes
    while (true) pause();
  });
  ready.CloseWrite();
  REQUIRE(ready.Wait());
  kill(pid, SIGKILL);
  CHECK(Reap(pid) == -SIGKILL);

  auto store = MustOpen(path);
  auto pending = store->PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  const JournalEntry& e = (*pending)[0];
  CHECK(e.body == body);
  CHECK(e.address == "instance.web");
  CHECK(e.idempotency_key == "key-" + std::to_string(e.seq));
  CHECK(store->Load()->serial == 0);
  // And the recovered operation commits like any other.
  StateCommit done;
  done.journal_done = e.seq;
  CHECK(*store->Commit(done) == 1);
}

namespace {

constexpr int kResources = 20;

// Generation g keeps its resources under instance.a[k] (odd g) or
// instance.b[k] (even g): each commit moves all of them and rewrites them.
std::string GenAddress(int64_t gen, int k) {
  return std::string(gen % 2 == 1 ? "instance.a[" : "instance.b[") + std::to_string(k) + "]";
}

// Commits generation after generation until killed; signals after the first.
int CommitForever(const std::string& path, Pipe& ready) {
  auto s = SqliteStateStore::Open(path);
  if (!s.ok()) return 4;
  SqliteStateStore& store = **s;
  const std::string padding(3000, 'p');  // several pages per commit
  bool signalled = false;
  while (true) {
    auto snap = store.Load();
    if (!snap.ok()) return 5;
    const int64_t gen = snap->serial + 1;
    auto seq = store.ReserveSequences(1);
    if (!seq.ok()) return 6;
    JournalEntry e;
    e.seq = *seq;
    e.address = "instance.a[0]";
    e.action = Action::kUpdate;
    e.body = "gen " + std::to_string(gen);
    if (!store.JournalBegin(e).ok()) return 7;
    StateCommit c;
    for (int k = 0; k < kResources; ++k) {
      if (gen > 1) c.moves.emplace_back(GenAddress(gen - 1, k), GenAddress(gen, k));
      ResourceState r;
      r.address = GenAddress(gen, k);
      r.kind = "instance";
      r.id = "i-" + std::to_string(k);
      r.attributes = {{"gen", gen}, {"padding", padding}};
      c.put.push_back(std::move(r));
    }
    c.outputs = std::map<std::string, Value>{{"gen", gen}};
    c.journal_done = *seq;
    auto serial = store.Commit(c);
    if (!serial.ok() || *serial != gen) return 8;
    if (!signalled) ready.Signal();
    signalled = true;
  }
}

}  // namespace

TEST_CASE("sqlite state: a child killed mid-commit never leaves half a commit", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> delay_us(0, 30'000);
  int64_t last_serial = 0;
  for (int round = 0; round < 6; ++round) {
    Pipe ready;
    pid_t pid = ForkChild([&] { return CommitForever(path, ready); });
    ready.CloseWrite();
    REQUIRE(ready.Wait());
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    REQUIRE(Reap(pid) == -SIGKILL);

    auto store = MustOpen(path);
    auto snap = store->Load();
    REQUIRE(snap.ok());
    const int64_t gen = snap->serial;
    INFO("round " << round << ", serial " << gen);
    CHECK(gen > last_serial);  // the child committed at least once
    last_serial = gen;
    REQUIRE(snap->resources.size() == kResources);
    for (int k = 0; k < kResources; ++k) {
      auto it = snap->resources.find(GenAddress(gen, k));
      REQUIRE(it != snap->resources.end());
      CHECK(it->second.attributes["gen"] == gen);
    }
    CHECK(snap->outputs.at("gen") == gen);
    auto pending = store->PendingJournal();
    REQUIRE(pending.ok());
    REQUIRE(pending->size() <= 1);
    if (pending->size() == 1) {
      CHECK((*pending)[0].body == "gen " + std::to_string(gen + 1));
      // Recover it as apply would: complete generation gen + 1 in one commit.
      StateCommit recover;
      for (int k = 0; k < kResources; ++k) {
        recover.moves.emplace_back(GenAddress(gen, k), GenAddress(gen + 1, k));
        ResourceState r = snap->resources.at(GenAddress(gen, k));
        r.address = GenAddress(gen + 1, k);
        r.attributes["gen"] = gen + 1;
        recover.put.push_back(std::move(r));
      }
      recover.outputs = std::map<std::string, Value>{{"gen", gen + 1}};
      recover.journal_done = (*pending)[0].seq;
      REQUIRE(*store->Commit(recover) == gen + 1);
      last_serial = gen + 1;
    }
  }
}

TEST_CASE("sqlite state: an empty database at user_version 0 becomes a state file", "[state]") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  WithRawDb(path, [](sqlite3* db) { ExecSql(db, "PRAGMA user_version = 0"); });
  auto store = MustOpen(path);
  CHECK(store->Load()->serial == 0);
  WithRawDb(path, [](sqlite3* db) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) == kSqliteStateFormatVersion);
    sqlite3_finalize(st);
  });
}

TEST_CASE("sqlite state: a format 1 file is upgraded, keeping its contents", "[state]") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  // The first layout, as a Cairn of format version 1 wrote it.
  WithRawDb(path, [](sqlite3* db) {
    ExecSql(db, R"sql(
      CREATE TABLE meta (slot INTEGER PRIMARY KEY CHECK (slot = 1), lineage TEXT NOT NULL,
                         serial INTEGER NOT NULL, format_version INTEGER NOT NULL);
      CREATE TABLE resources (address TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL,
                              attributes TEXT NOT NULL, depends_on TEXT NOT NULL,
                              schema_version INTEGER NOT NULL);
      CREATE TABLE journal (seq INTEGER PRIMARY KEY, address TEXT NOT NULL, action TEXT NOT NULL,
                            kind TEXT NOT NULL, remote_id TEXT NOT NULL, method TEXT NOT NULL,
                            path TEXT NOT NULL, body BLOB NOT NULL,
                            idempotency_key TEXT NOT NULL, started_at INTEGER NOT NULL);
      CREATE TABLE sequence (slot INTEGER PRIMARY KEY CHECK (slot = 1), last INTEGER NOT NULL);
      CREATE TABLE lock (slot INTEGER PRIMARY KEY CHECK (slot = 1), id TEXT NOT NULL,
                         holder TEXT NOT NULL, operation TEXT NOT NULL,
                         created_at INTEGER NOT NULL);
      INSERT INTO meta VALUES (1, '11111111-2222-4333-8444-555555555555', 7, 1);
      INSERT INTO resources VALUES ('network.core', 'network', 'net-1', '{"cidr":"10.0.0.0/16"}',
                                    '[]', 1);
      INSERT INTO journal VALUES (8, 'instance.web', 'create', 'instance', '', 'POST',
                                  '/api/v1/instances', X'7B7D', 'key-8', 1700000000);
      INSERT INTO sequence VALUES (1, 8);
      PRAGMA application_id = 1128354382;
      PRAGMA user_version = 1;
    )sql");
  });
  auto store = MustOpen(path);
  StateSnapshot snap = *store->Load();
  CHECK(snap.lineage == "11111111-2222-4333-8444-555555555555");
  CHECK(snap.serial == 7);
  CHECK(snap.resources.at("network.core").attributes["cidr"] == "10.0.0.0/16");
  CHECK(snap.resources.at("network.core").tainted.empty());
  CHECK(snap.outputs.empty());
  auto pending = *store->PendingJournal();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].body == "{}");
  CHECK(pending[0].context == Value::object());
  CHECK(*store->ReserveSequences(1) == 9);
  StateCommit c;
  c.outputs = std::map<std::string, Value>{{"net", "net-1"}};
  c.journal_done = 8;
  CHECK(*store->Commit(c) == 8);
  store.reset();
  CHECK(MustOpen(path)->Load()->outputs.at("net") == "net-1");
  CHECK(MustOpen(path)->Load()->sensitive_outputs.empty());
  // An output recorded before its sensitivity was (NULL) is taken as
  // sensitive: `cairn output` masks it until the next apply records it.
  WithRawDb(path, [](sqlite3* db) { ExecSql(db, "UPDATE outputs SET sensitive = NULL"); });
  CHECK(MustOpen(path)->Load()->sensitive_outputs == std::set<std::string>{"net"});
}

TEST_CASE("sqlite state: a file from a newer Cairn is refused, untouched", "[state]") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  MustOpen(path);
  WithRawDb(path, [](sqlite3* db) { ExecSql(db, "PRAGMA user_version = 99"); });
  auto store = SqliteStateStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kFailedPrecondition);
  const std::string& msg = store.status().message();
  CHECK(Contains(msg, path));
  CHECK(Contains(msg, "format version 99"));
  CHECK(Contains(msg, "newer Cairn"));
  CHECK(Contains(msg, "up to " + std::to_string(kSqliteStateFormatVersion)));
}

TEST_CASE("sqlite state: a database that is not a state file is refused", "[state]") {
  TempDir dir;
  const std::string other = dir.path() + "/app.db";
  WithRawDb(other, [](sqlite3* db) { ExecSql(db, "CREATE TABLE users (name TEXT)"); });
  auto refused = SqliteStateStore::Open(other);
  REQUIRE_FALSE(refused.ok());
  CHECK(Contains(refused.status().message(), "not a Cairn state file"));

  const std::string garbage = dir.path() + "/garbage.db";
  WriteFile(garbage, std::string(8192, 'x'));
  auto bad = SqliteStateStore::Open(garbage);
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status().message(), garbage));
}

TEST_CASE("sqlite state: a negative format version is refused as not a state file", "[state]") {
  // Found by state_reader_fuzz (tests/fuzz/regressions/state_reader/): the
  // migrations were indexed by it.
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  MustOpen(path);
  WithRawDb(path, [](sqlite3* db) { ExecSql(db, "PRAGMA user_version = -3"); });
  for (bool existing : {false, true}) {
    auto store = existing ? SqliteStateStore::OpenExisting(path) : SqliteStateStore::Open(path);
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(store.status().message(), path));
    CHECK(Contains(store.status().message(), "not a Cairn state file (format version -3)"));
  }
}

TEST_CASE("sqlite state: corrupted rows and journal entries are clear errors", "[state]") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  {
    auto store = MustOpen(path);
    StateCommit c;
    c.put.push_back({"network.core", "network", "net-1", Value{{"id", "net-1"}}, {}});
    REQUIRE(store->Commit(c).ok());
    int64_t seq = *store->ReserveSequences(1);
    JournalEntry e{seq,     "network.other", Action::kCreate, "network",
                   "",      "POST",          "/v1/networks",  "{}",
                   "key-1", 1700000000,      Value::object()};
    REQUIRE(store->JournalBeginAll(std::vector<JournalEntry>{e}).ok());
  }
  SECTION("attributes that are not JSON") {
    WithRawDb(path,
              [](sqlite3* db) { ExecSql(db, "UPDATE resources SET attributes = '{\"id\":'"); });
    auto loaded = MustOpen(path)->Load();
    REQUIRE_FALSE(loaded.ok());
    CHECK(Contains(loaded.status().message(), "attributes of network.core"));
  }
  SECTION("depends_on that is not a list") {
    WithRawDb(path, [](sqlite3* db) { ExecSql(db, "UPDATE resources SET depends_on = '{}'"); });
    auto loaded = MustOpen(path)->Load();
    REQUIRE_FALSE(loaded.ok());
    CHECK(Contains(loaded.status().message(), "depends_on of network.core is not an array"));
  }
  SECTION("a journal context that is not JSON") {
    WithRawDb(path, [](sqlite3* db) { ExecSql(db, "UPDATE journal SET context = X'FF00'"); });
    auto pending = MustOpen(path)->PendingJournal();
    REQUIRE_FALSE(pending.ok());
    CHECK(Contains(pending.status().message(), "context of journal entry"));
  }
  SECTION("the action is stored as its text, which is read back") {
    WithRawDb(path, [](sqlite3* db) {
      sqlite3_stmt* q = nullptr;
      REQUIRE(sqlite3_prepare_v2(db, "SELECT action FROM journal", -1, &q, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(q) == SQLITE_ROW);
      CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))) == "create");
      sqlite3_finalize(q);
      ExecSql(db, "UPDATE journal SET action = 'delete'");
    });
    auto pending = MustOpen(path)->PendingJournal();
    REQUIRE(pending.ok());
    REQUIRE(pending->size() == 1);
    CHECK((*pending)[0].action == Action::kDelete);
  }
  SECTION("an action that is no operation") {
    WithRawDb(path, [](sqlite3* db) { ExecSql(db, "UPDATE journal SET action = 'replace'"); });
    auto pending = MustOpen(path)->PendingJournal();
    REQUIRE_FALSE(pending.ok());
    CHECK(Contains(pending.status().message(), "journal entry"));
    CHECK(Contains(pending.status().message(), "unknown action \"replace\""));
  }
  SECTION("a journal context that is JSON but not a mapping reads, for recovery to handle") {
    WithRawDb(path, [](sqlite3* db) { ExecSql(db, "UPDATE journal SET context = '[1,2]'"); });
    auto pending = MustOpen(path)->PendingJournal();
    REQUIRE(pending.ok());
    REQUIRE(pending->size() == 1);
    CHECK((*pending)[0].context == Value::array({1, 2}));
  }
}

TEST_CASE("sqlite state: concurrent writers are group-committed, each with its own outcome",
          "[state]") {
  // What a parallel apply does: many threads each take a sequence number,
  // journal, and commit; some commits fail (a journal entry that is not
  // pending). Batched together or not, every call keeps its own result and a
  // failed one takes nothing else with it.
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  constexpr int kThreads = 16, kRounds = 25;
  // Catch2 assertions are not thread-safe: threads record, the test checks.
  std::mutex mu;
  std::set<int64_t> seqs, serials;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mu);
    failures.push_back(what);
  };
  {
    auto store = MustOpen(path);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          auto seq = store->ReserveSequences(1);
          if (!seq.ok()) return fail("ReserveSequences: " + seq.status().ToString());
          JournalEntry e;
          e.seq = *seq;
          e.address = "instance.t" + std::to_string(t) + "_" + std::to_string(round);
          e.action = Action::kCreate;
          e.kind = "instance";
          e.method = "POST";
          e.path = "/api/v1/compute";
          e.body = "{}";
          e.idempotency_key = "key-" + std::to_string(*seq);
          if (Status st = store->JournalBegin(e); !st.ok())
            return fail("JournalBegin: " + st.ToString());
          auto refused = store->Commit(StateCommit{.journal_done = *seq + 1'000'000});
          if (refused.status().code() != StatusCode::kNotFound)
            fail("a commit that should fail did not");
          ResourceState r;
          r.address = e.address;
          r.kind = "instance";
          r.id = "id-" + std::to_string(*seq);
          r.attributes = {{"id", r.id}};
          StateCommit c;
          c.put.push_back(r);
          c.journal_done = *seq;
          auto serial = store->Commit(c);
          if (!serial.ok()) return fail("Commit: " + serial.status().ToString());
          std::lock_guard lock(mu);
          if (!seqs.insert(*seq).second) failures.push_back("sequence number given twice");
          if (!serials.insert(*serial).second) failures.push_back("serial given twice");
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(seqs.size() == kThreads * kRounds);
  auto store = MustOpen(path);  // what is on disk
  auto snap = store->Load();
  REQUIRE(snap.ok());
  CHECK(snap->resources.size() == kThreads * kRounds);
  CHECK(snap->serial == kThreads * kRounds);  // refused commits did not count
  CHECK(*serials.rbegin() == kThreads * kRounds);
  auto pending = store->PendingJournal();
  REQUIRE(pending.ok());
  CHECK(pending->empty());
}

}  // namespace sqlite_state_store_test
