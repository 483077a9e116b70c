// server/sqlite_api_store.h on its own: a batch's mutations, the reads, and
// the schema version of a data directory.
#include "server/sqlite_api_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <future>

#include "tests/support/process.h"

namespace sqlite_api_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::server;
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

// Submits `m` and waits for its completion.
Status Run(ApiStore& store, ApiStore::Mutation m) {
  std::promise<Status> done;
  store.Submit(std::move(m), [&](const Status& st) { done.set_value(st); });
  return done.get_future().get();
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
  REQUIRE(Run(store, [&](WriteTxn& txn) {
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
    REQUIRE(Run(**store, [](WriteTxn& txn) {
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
  CHECK(user_version("SELECT 1") == 1);
  {
    auto store = SqliteApiStore::Open(tmp.path(), StoreOptions{});
    REQUIRE(store.ok());
    CHECK((*(*store)->Get("p", "a")).has_value());
  }
  CHECK(user_version("PRAGMA user_version = 2") == 2);
  auto newer = SqliteApiStore::Open(tmp.path(), StoreOptions{});
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().code() == StatusCode::kFailedPrecondition);
  CHECK(newer.status().message() ==
        "the data directory has schema version 2, newer than this cairn (1)");
  CHECK(user_version("SELECT 1") == 2);
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
    REQUIRE(Run(**opened, [&](WriteTxn& txn) { return txn.Insert(&a).ok(); }).ok());
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

}  // namespace sqlite_api_store_test
