// server/sqlite_api_store.h on its own: a batch's mutations, the reads, and
// the schema version of a data directory.
#include "server/sqlite_api_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <future>
#include <string>
#include <vector>

#include "tests/server/support/api_store_steps.h"
#include "tests/support/process.h"

namespace sqlite_api_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::server;
using cairn::server::testing::RunMutation;
using cairn::server::testing::WalkInstances;
using cairn::testing::TempDir;

namespace {

Record NewRecord(const std::string& id, int64_t next_step_ms = 0) {
  Record r;
  r.id = id;
  r.project = "p";
  r.kind = "instance";
  r.status = "queued";
  r.last_op = "create";
  r.next_step_ms = next_step_ms;
  r.created_at = "2026-01-01T00:00:00Z";
  r.attrs = {{"name", id}, {"tags", {"x"}}};
  return r;
}

}  // namespace

TEST_CASE("sqlite store: a batch keeps the mutations that succeed, in one commit") {
  TempDir tmp;
  StoreOptions options;
  options.batch_delay = std::chrono::milliseconds(200);  // the three below in one batch
  auto opened = SqliteApiStore::Open(tmp.path(), options);
  REQUIRE(opened.ok());
  ApiStore& store = **opened;

  std::vector<std::future<Status>> done;
  std::vector<std::promise<Status>> promises(3);
  std::string first_ip;
  auto submit = [&](int i, ApiStore::Mutation m) {
    done.push_back(promises[i].get_future());
    store.Submit(std::move(m), [&promises, i](const Status& st) { promises[i].set_value(st); });
  };
  submit(0, [&](WriteTxn& txn) {
    Record a = NewRecord("a", 5000);
    if (!txn.Insert(&a).ok() || a.seq <= 0) return false;
    StoredResponse r{"sha", 201, "[]", std::string("bin\0ary", 7), 42};
    return txn.PutResponse("scope-a", r).ok();
  });
  submit(1, [&](WriteTxn& txn) {
    Record b = NewRecord("b");
    (void)txn.Insert(&b);
    (void)txn.AllocateIpv4("eu-central");
    return false;  // rolled back: the record, and the address taken
  });
  submit(2, [&](WriteTxn& txn) {
    Record c = NewRecord("c", 9000);
    auto ip = txn.AllocateIpv4("eu-central");
    if (!ip.ok()) return false;
    first_ip = *ip;
    c.attrs["ipv4"] = *ip;
    return txn.Insert(&c).ok();
  });
  for (auto& f : done) CHECK(f.get().ok());
  CHECK(store.commits() == 1);
  CHECK(store.committed_mutations() == 2);
  CHECK(first_ip == "100.64.0.1");

  auto a = store.Get("p", "a");
  REQUIRE(a.ok());
  REQUIRE(a->has_value());
  CHECK((*a)->next_step_ms == 5000);
  CHECK((*a)->attrs == NewRecord("a").attrs);
  CHECK((*store.Get("p", "b")).has_value() == false);
  CHECK((*store.Get("other", "a")).has_value() == false);
  auto list = store.List("p", "instance", 0, 10);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].id == "a");
  CHECK((*list)[1].id == "c");
  CHECK((*list)[1].attrs["ipv4"] == "100.64.0.1");
  CHECK(store.List("p", "instance", (*list)[0].seq, 10)->size() == 1);
  auto stored = store.GetResponse("scope-a");
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());
  CHECK((*stored)->body == std::string("bin\0ary", 7));
  CHECK((*stored)->status == 201);
  CHECK((*stored)->created_ms == 42);
  CHECK(*store.NextDueMs() == 5000);

  // In the writer's transaction: what the batch before wrote, updates, due records.
  REQUIRE(RunMutation(store, [&](WriteTxn& txn) {
            auto due = txn.Due(6000, 10);
            CHECK((due.ok() && due->size() == 1 && (*due)[0].id == "a"));
            auto refs = txn.FindReferencing("p", "instance", "tags", "x");
            CHECK((refs.ok() && refs->size() == 2));
            Record a2 = **txn.Get("p", "a");
            a2.status = "running";
            a2.next_step_ms = 0;  // nothing more scheduled: NULL
            CHECK(txn.Update(a2).ok());
            CHECK(*txn.AllocateIpv4("eu-central") == "100.64.0.2");
            CHECK(txn.ReplaceTokens({{"h1", "p"}, {"h2", "q"}}).ok());
            return true;
          }).ok());
  CHECK((*store.Get("p", "a"))->status == "running");
  CHECK(*store.NextDueMs() == 9000);
  auto tokens = store.LoadTokens();
  REQUIRE(tokens.ok());
  CHECK(tokens->size() == 2);
}

TEST_CASE("sqlite store: a data directory keeps its records, one of a newer schema is refused") {
  TempDir tmp;
  {
    auto store = SqliteApiStore::Open(tmp.path(), StoreOptions{});
    REQUIRE(store.ok());
    REQUIRE(RunMutation(**store, [](WriteTxn& txn) {
              Record a = NewRecord("a");
              return txn.Insert(&a).ok();
            }).ok());
  }
  const std::string db_path = tmp.path() + "/cairn-server.db";
  auto user_version = [&](const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(q) == SQLITE_ROW);
    int v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
  };
  CHECK(user_version("SELECT 1") == 2);
  {
    auto store = SqliteApiStore::Open(tmp.path(), StoreOptions{});
    REQUIRE(store.ok());
    CHECK((*(*store)->Get("p", "a")).has_value());
  }
  CHECK(user_version("PRAGMA user_version = 3") == 3);
  auto newer = SqliteApiStore::Open(tmp.path(), StoreOptions{});
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().code() == StatusCode::kFailedPrecondition);
  CHECK(newer.status().message() ==
        "the data directory has schema version 3, newer than this cairn (2)");
  CHECK(user_version("SELECT 1") == 3);
}

TEST_CASE("sqlite store: the database and its WAL are private to the owner (0600)") {
  TempDir tmp;
  const std::string db = tmp.path() + "/cairn-server.db";
  auto mode = [](const std::string& path) {
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    return st.st_mode & 0777;
  };
  {
    auto opened = SqliteApiStore::Open(tmp.path(), StoreOptions{});
    REQUIRE(opened.ok());
    Record a = NewRecord("a");
    REQUIRE(RunMutation(**opened, [&](WriteTxn& txn) { return txn.Insert(&a).ok(); }).ok());
    CHECK(mode(db) == 0600);
    CHECK(mode(db + "-wal") == 0600);
    CHECK(mode(tmp.path() + "/LOCK") == 0600);
    (*opened)->Close();
  }
  // A database an older server left 0644 is tightened at the next start.
  REQUIRE(chmod(db.c_str(), 0644) == 0);
  auto again = SqliteApiStore::Open(tmp.path(), StoreOptions{});
  REQUIRE(again.ok());
  CHECK(mode(db) == 0600);
}

namespace {

// Every row of `sql` on the database at `path`, its columns joined by '|'.
std::vector<std::string> Rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) == SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(q) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(q); ++i) {
      const unsigned char* t = sqlite3_column_text(q, i);
      row += (i ? "|" : "") + std::string(t ? reinterpret_cast<const char*>(t) : "");
    }
    out.push_back(row);
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("sqlite store: lists read the index of live records in seq order past deleted ones") {
  TempDir tmp;
  auto opened = SqliteApiStore::Open(tmp.path(), StoreOptions{});
  REQUIRE(opened.ok());
  ApiStore& store = **opened;
  // 100 records, all but every tenth deleted, and one of another kind.
  REQUIRE(RunMutation(store, [](WriteTxn& txn) {
            for (int i = 0; i < 100; ++i) {
              Record r = NewRecord("r" + std::to_string(100 + i));
              if (i % 10 != 0) r.status = "deleted";
              if (!txn.Insert(&r).ok()) return false;
            }
            Record other = NewRecord("other");
            other.kind = "network";
            return txn.Insert(&other).ok();
          }).ok());
  std::vector<std::string> live;
  for (int i = 0; i < 100; i += 10) live.push_back("r" + std::to_string(100 + i));
  CHECK(WalkInstances(store, 3) == live);
  CHECK(WalkInstances(store, 200) == live);
  // A record deleted between pages leaves the rest; a new one comes last.
  auto first = store.List("p", "instance", 0, 2);
  REQUIRE(first.ok());
  REQUIRE(first->size() == 2);
  REQUIRE(RunMutation(store, [](WriteTxn& txn) {
            auto r = txn.Get("p", "r130");
            if (!r.ok() || !*r) return false;
            (*r)->status = "deleted";
            Record n = NewRecord("new");
            return txn.Update(**r).ok() && txn.Insert(&n).ok();
          }).ok());
  std::vector<std::string> rest;
  for (int64_t after = first->back().seq;;) {
    auto page = store.List("p", "instance", after, 2);
    REQUIRE(page.ok());
    for (const Record& r : *page) rest.push_back(r.id);
    if (page->size() < 2) break;
    after = page->back().seq;
  }
  CHECK(rest ==
        std::vector<std::string>{"r120", "r140", "r150", "r160", "r170", "r180", "r190", "new"});
  // The plan: a search of resources_live, never a scan of the table or of
  // an index that holds the deleted records.
  const std::string db = tmp.path() + "/cairn-server.db";
  auto plan = Rows(db,
                   "EXPLAIN QUERY PLAN SELECT seq, id FROM resources WHERE project = 'p' AND "
                   "kind = 'instance' AND seq > 5 AND status != 'deleted' ORDER BY seq LIMIT 3");
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].find("SEARCH resources USING INDEX resources_live (project=? AND kind=? AND "
                     "seq>?)") != std::string::npos);
}

TEST_CASE("sqlite store: a data directory of schema 1 gains the index of live records") {
  TempDir tmp;
  const std::string db = tmp.path() + "/cairn-server.db";
  {
    // Schema 1 as a server of that version left it, with a live and a
    // deleted record.
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
    const char* v1 = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE tokens(sha256 TEXT PRIMARY KEY, project TEXT NOT NULL);
CREATE TABLE resources(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  last_op TEXT NOT NULL,
  fate TEXT NOT NULL DEFAULT '',
  next_step_ms INTEGER,
  created_at TEXT NOT NULL,
  attrs TEXT NOT NULL);
CREATE INDEX resources_by_project_kind ON resources(project, kind, seq);
CREATE INDEX resources_due ON resources(next_step_ms) WHERE next_step_ms IS NOT NULL;
CREATE TABLE idempotency(
  scope TEXT PRIMARY KEY,
  request_sha256 TEXT NOT NULL,
  status INTEGER NOT NULL,
  headers TEXT NOT NULL,
  body BLOB NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE INDEX idempotency_by_age ON idempotency(created_ms);
CREATE TABLE ipv4_pool(region TEXT PRIMARY KEY, next_host INTEGER NOT NULL);
INSERT INTO resources(id, project, kind, status, last_op, created_at, attrs)
  VALUES('gone', 'p', 'instance', 'deleted', 'delete', '2026-01-01T00:00:00Z', '{}'),
        ('kept', 'p', 'instance', 'running', 'create', '2026-01-01T00:00:00Z', '{}');
PRAGMA user_version = 1;
)sql";
    REQUIRE(sqlite3_exec(h, v1, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(h);
  }
  {
    auto store = SqliteApiStore::Open(tmp.path(), StoreOptions{});
    REQUIRE(store.ok());
    CHECK(WalkInstances(**store, 10) == std::vector<std::string>{"kept"});
    CHECK((*(*store)->Get("p", "gone")).has_value());
  }
  CHECK(Rows(db, "PRAGMA user_version") == std::vector<std::string>{"2"});
  CHECK(Rows(db,
             "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = "
             "'resources' AND name NOT LIKE 'sqlite_%' ORDER BY name") ==
        std::vector<std::string>{"resources_due", "resources_live"});
}

}  // namespace sqlite_api_store_test
