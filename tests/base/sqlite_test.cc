// base/sqlite.h: the error mapping both stores share, statements whose
// errors stick, transactions rolled back unless committed, connections and
// their statement cache, migrations.
#include "base/sqlite.h"

#include <catch2/catch.hpp>

#include "tests/support/process.h"

namespace sqlite_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) { REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK); }
  ~Db() { sqlite3_close(db); }
};

}  // namespace

TEST_CASE("SqliteStatus maps busy to Unavailable, not-a-database to FailedPrecondition") {
  CHECK(SqliteStatus(nullptr, SQLITE_BUSY, "commit", "state database").code() ==
        StatusCode::kUnavailable);
  CHECK(SqliteStatus(nullptr, SQLITE_BUSY_SNAPSHOT, "x", "s").code() == StatusCode::kUnavailable);
  CHECK(SqliteStatus(nullptr, SQLITE_NOTADB, "x", "s").code() == StatusCode::kFailedPrecondition);
  CHECK(SqliteStatus(nullptr, SQLITE_IOERR_FSYNC, "x", "s").code() == StatusCode::kIOError);
  Status busy = SqliteStatus(nullptr, SQLITE_LOCKED, "begin", "server store");
  CHECK(busy.message().rfind("server store: begin: ", 0) == 0);
  CHECK(busy.message().find("keeps the server store busy") != std::string::npos);

  // A file that is not a database, read for real.
  TempDir tmp;
  WriteFile(tmp.path() + "/junk.db", std::string(4096, 'x'));
  Db db(tmp.path() + "/junk.db");
  Status st = SqliteExec(db.db, "SELECT * FROM sqlite_master", "state database");
  CHECK(st.code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("SqliteStmt binds, steps and keeps its first error, SqliteTxn rolls back") {
  TempDir tmp;
  Db db(tmp.path() + "/t.db");
  REQUIRE(SqliteExec(db.db, "CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER)", "s").ok());
  {
    SqliteTxn txn(db.db, "s");
    REQUIRE(txn.Begin(/*write=*/true).ok());
    REQUIRE(
        SqliteStmt(db.db, "INSERT INTO t VALUES (?1, ?2)", "s").Text(1, "a").Int(2, 7).Run().ok());
    // Not committed: rolled back at the end of the scope.
  }
  SqliteStmt count(db.db, "SELECT count(*) FROM t", "s");
  REQUIRE(count.Step());
  CHECK(count.ColInt(0) == 0);

  SqliteTxn txn(db.db, "s");
  REQUIRE(txn.Begin(true).ok());
  REQUIRE(
      SqliteStmt(db.db, "INSERT INTO t VALUES (?1, ?2)", "s").Text(1, "b").Int(2, 8).Run().ok());
  // A constraint error sticks: later calls do nothing, status() says why.
  SqliteStmt dup(db.db, "INSERT INTO t VALUES (?1, ?2)", "s");
  dup.Text(1, "b").Int(2, 9);
  CHECK_FALSE(dup.Run().ok());
  CHECK_FALSE(dup.Step());
  CHECK(dup.status().message().find("UNIQUE") != std::string::npos);
  REQUIRE(txn.Commit().ok());
  SqliteStmt row(db.db, "SELECT k, n FROM t", "s");
  REQUIRE(row.Step());
  CHECK(row.ColText(0) == "b");
  CHECK(row.ColInt(1) == 8);
  // A statement that does not prepare reports it and never steps.
  SqliteStmt bad(db.db, "SELEC nonsense", "s");
  CHECK_FALSE(bad.Step());
  CHECK(bad.status().message().rfind("s: prepare: ", 0) == 0);
}

namespace {

int64_t QueryInt(SqliteDb& db, const char* sql) {
  SqliteStmt q(db, sql);
  REQUIRE(q.Step());
  return q.ColInt(0);
}

bool HasTable(SqliteDb& db, const std::string& name) {
  SqliteStmt q(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  REQUIRE(q.Text(1, name).Step());
  return q.ColInt(0) == 1;
}

std::unique_ptr<SqliteDb> OpenForTest(const std::string& path) {
  SqliteOpenOptions options;
  options.create = true;
  options.pragmas = {"PRAGMA synchronous = FULL"};
  auto db = SqliteDb::Open(path, options, "test db");
  REQUIRE(db.ok());
  return std::move(*db);
}

}  // namespace

TEST_CASE("SqliteDb opens in WAL with its pragmas, and creates only when asked") {
  TempDir tmp;
  SqliteOpenOptions options;
  auto missing = SqliteDb::Open(tmp.path() + "/none.db", options, "test db");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kIOError);
  CHECK(missing.status().message().rfind("test db: open: ", 0) == 0);

  auto db = OpenForTest(tmp.path() + "/t.db");
  CHECK(QueryInt(*db, "PRAGMA synchronous") == 2);  // FULL
  SqliteStmt mode(*db, "PRAGMA journal_mode");
  REQUIRE(mode.Step());
  CHECK(mode.ColText(0) == "wal");

  // A file that is not a database: refused as one, at the switch to WAL.
  WriteFile(tmp.path() + "/junk.db", std::string(4096, 'x'));
  auto junk = SqliteDb::Open(tmp.path() + "/junk.db", options, "test db");
  REQUIRE_FALSE(junk.ok());
  CHECK(junk.status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("SqliteDb's cached statements are prepared once and left reset, without bindings") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(db->Exec("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)").ok());
  static constexpr const char* kSelect = "SELECT n, ?1 FROM t ORDER BY n";
  Result<sqlite3_stmt*> first = db->Prepared(kSelect);
  REQUIRE(first.ok());
  CHECK(*db->Prepared(kSelect) == *first);
  {
    // Stopped after one row of three: left mid-statement.
    SqliteStmt q = db->Cached(kSelect);
    REQUIRE(q.Text(1, "bound").Step());
    CHECK(q.ColInt(0) == 1);
    CHECK(q.ColText(1) == "bound");
    CHECK(sqlite3_stmt_busy(*first) != 0);
  }
  // Reset (no read transaction stays open) and the binding cleared.
  CHECK(sqlite3_stmt_busy(*first) == 0);
  CHECK(sqlite3_get_autocommit(db->handle()) != 0);
  {
    SqliteStmt q = db->Cached(kSelect);
    REQUIRE(q.Step());
    CHECK(q.ColInt(0) == 1);  // from the first row again
    CHECK(sqlite3_column_type(*first, 1) == SQLITE_NULL);
  }
  // Another connection can write and checkpoint all of the WAL: no reader
  // of this one holds a snapshot.
  auto other = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(other->Exec("INSERT INTO t VALUES (4)").ok());
  int log = -1, done = -1;
  REQUIRE(sqlite3_wal_checkpoint_v2(other->handle(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, &log,
                                    &done) == SQLITE_OK);
  // A statement that does not prepare: the error, every time it is asked for.
  SqliteStmt bad = db->Cached("SELEC nonsense");
  CHECK_FALSE(bad.Step());
  CHECK(bad.status().message().rfind("test db: prepare: ", 0) == 0);
}

TEST_CASE("SqliteTxn on a SqliteDb commits through cached statements, rolls back otherwise") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(db->Exec("CREATE TABLE t (n INTEGER)").ok());
  for (int i = 0; i < 3; ++i) {
    SqliteTxn txn(*db);
    REQUIRE(txn.Begin(/*write=*/true).ok());
    REQUIRE(db->Cached("INSERT INTO t VALUES (?1)").Int(1, i).Run().ok());
    if (i != 1) REQUIRE(txn.Commit().ok());  // 1 is rolled back
  }
  CHECK(QueryInt(*db, "SELECT sum(n) FROM t") == 2);
  CHECK(QueryInt(*db, "SELECT count(*) FROM t") == 2);
  CHECK(sqlite3_get_autocommit(db->handle()) != 0);
}

namespace {

constexpr const char* kTwoSteps[] = {
    "CREATE TABLE a (x INTEGER)",
    "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (1)",
};

SqliteMigrations Steps(std::span<const char* const> steps) {
  SqliteMigrations m;
  m.steps = steps;
  m.newer = [](int64_t version) {
    return Status::FailedPrecondition("version " + std::to_string(version) + " is too new");
  };
  return m;
}

}  // namespace

TEST_CASE("SqliteMigrate brings a fresh database to the latest version") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(SqliteMigrate(*db, Steps(kTwoSteps)).ok());
  CHECK(QueryInt(*db, "PRAGMA user_version") == 2);
  CHECK(HasTable(*db, "a"));
  CHECK(HasTable(*db, "b"));
  CHECK(QueryInt(*db, "SELECT count(*) FROM a") == 1);
  // Again: nothing to do (a step run twice would fail: the tables exist).
  REQUIRE(SqliteMigrate(*db, Steps(kTwoSteps)).ok());
  CHECK(QueryInt(*db, "PRAGMA user_version") == 2);
}

TEST_CASE("SqliteMigrate runs only the missing steps of an older database") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(SqliteMigrate(*db, Steps(std::span(kTwoSteps).first(1))).ok());
  CHECK(QueryInt(*db, "PRAGMA user_version") == 1);
  CHECK_FALSE(HasTable(*db, "b"));
  std::vector<int64_t> seen;
  SqliteMigrations m = Steps(kTwoSteps);
  m.check = [&](int64_t v) {
    seen.push_back(v);
    return Status::Ok();
  };
  m.finish = [&](int64_t v) {
    seen.push_back(v);
    // Inside the migration's transaction: the new version is already set.
    CHECK(QueryInt(*db, "PRAGMA user_version") == 2);
    return Status::Ok();
  };
  REQUIRE(SqliteMigrate(*db, m).ok());
  CHECK(seen == std::vector<int64_t>{1, 1});
  CHECK(QueryInt(*db, "PRAGMA user_version") == 2);
  CHECK(HasTable(*db, "b"));
}

TEST_CASE("SqliteMigrate refuses a database newer than it knows, or of a negative version") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  REQUIRE(db->Exec("PRAGMA user_version = 3").ok());
  Status st = SqliteMigrate(*db, Steps(kTwoSteps));
  CHECK(st.code() == StatusCode::kFailedPrecondition);
  CHECK(st.message() == "version 3 is too new");
  CHECK(QueryInt(*db, "PRAGMA user_version") == 3);
  CHECK_FALSE(HasTable(*db, "a"));

  REQUIRE(db->Exec("PRAGMA user_version = -1").ok());
  st = SqliteMigrate(*db, Steps(kTwoSteps));
  CHECK(st.code() == StatusCode::kFailedPrecondition);
  CHECK(st.message() == "test db: unknown schema version -1");

  // `check` refuses first, before the version is looked at.
  SqliteMigrations m = Steps(kTwoSteps);
  m.check = [](int64_t) { return Status::FailedPrecondition("not ours"); };
  CHECK(SqliteMigrate(*db, m).message() == "not ours");
  CHECK(QueryInt(*db, "PRAGMA user_version") == -1);
}

TEST_CASE("SqliteMigrate leaves the database as it was when a step fails") {
  TempDir tmp;
  auto db = OpenForTest(tmp.path() + "/t.db");
  constexpr const char* kBroken[] = {
      "CREATE TABLE a (x INTEGER)",
      "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1)",
  };
  Status st = SqliteMigrate(*db, Steps(kBroken));
  CHECK(st.code() == StatusCode::kIOError);
  CHECK(st.message().find("nowhere") != std::string::npos);
  CHECK(QueryInt(*db, "PRAGMA user_version") == 0);
  CHECK_FALSE(HasTable(*db, "a"));
  CHECK_FALSE(HasTable(*db, "b"));
  CHECK(sqlite3_get_autocommit(db->handle()) != 0);

  // So does a `finish` that fails, after every step ran.
  SqliteMigrations m = Steps(kTwoSteps);
  m.finish = [](int64_t) { return Status::IOError("finish failed"); };
  CHECK(SqliteMigrate(*db, m).message() == "finish failed");
  CHECK(QueryInt(*db, "PRAGMA user_version") == 0);
  CHECK_FALSE(HasTable(*db, "a"));
}

}  // namespace sqlite_test
