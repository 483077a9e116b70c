// base/sqlite.h: the error mapping both stores share, statements whose
// errors stick, transactions rolled back unless committed.
#include "base/sqlite.h"

#include <catch2/catch.hpp>

#include "tests/support/process.h"

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
