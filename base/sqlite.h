// SQLite the one way both stores use it (the engine's state, the server's
// records): connections opened with the same steps (busy timeout, WAL,
// pragmas) and a cache of prepared statements, errors mapped to Status the
// same way, prepared statements whose errors stick, transactions rolled back
// unless committed, and schema migrations recorded in PRAGMA user_version.
// `subject` names the database in messages ("state database", "server
// store"); connections, statements and transactions keep a view of it, so it
// must outlive them (a literal).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace cairn {

class SqliteDb;

// `rc` as a Status: BUSY and LOCKED are Unavailable (another process keeps
// the database busy: retry), NOTADB and CORRUPT FailedPrecondition (not a
// database this can read), anything else IOError. The message is
// "SUBJECT: WHAT: " and SQLite's own message (of `db`, or of `rc` when
// `db` is null).
Status SqliteStatus(sqlite3* db, int rc, std::string_view what, std::string_view subject);

// Runs `sql` (several statements allowed) without results.
Status SqliteExec(sqlite3* db, const char* sql, std::string_view subject);

// A prepared statement. Errors stick: after the first failure every call is a
// no-op and status() reports it.
class SqliteStmt {
 public:
  // Prepares `sql` for this statement alone.
  SqliteStmt(sqlite3* db, const char* sql, std::string_view subject);
  SqliteStmt(SqliteDb& db, const char* sql);
  // Borrows a statement prepared once by its owner (SqliteDb::Cached), and
  // leaves it reset, with no bindings, for the next use.
  SqliteStmt(sqlite3* db, const Result<sqlite3_stmt*>& reused, std::string_view subject);
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  SqliteStmt& Text(int i, std::string_view v);
  SqliteStmt& Blob(int i, std::string_view v);
  SqliteStmt& Int(int i, int64_t v);
  // True for a row, false when done or failed (see status()).
  bool Step();
  // Steps to the end; the status.
  Status Run();
  std::string ColText(int c);
  int64_t ColInt(int c);
  const Status& status() const { return status_; }

 private:
  void Check(int rc);
  sqlite3* db_;
  std::string_view subject_;
  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = true;
  Status status_;
};

// How SqliteDb::Open sets up a connection.
struct SqliteOpenOptions {
  bool create = false;  // SQLITE_OPEN_CREATE: make the file when it is missing
  int busy_timeout_ms = 5000;
  bool extended_result_codes = false;
  // Switches the file to WAL and refuses a connection that is not in WAL
  // mode then. While another process is switching the same new file, SQLite
  // answers BUSY at once, without calling the busy handler, so Open waits
  // itself as the handler would: sleeps on `clock` (SystemClock() when
  // null), bounded by the busy timeout.
  bool wal = true;
  Clock* clock = nullptr;
  // Run in order after WAL ("PRAGMA synchronous = FULL", ...).
  std::vector<const char*> pragmas;
};

// One SQLite connection (SQLITE_OPEN_NOMUTEX) and its prepared statements.
// Not thread-safe: one thread at a time uses it, and what it prepared.
class SqliteDb {
 public:
  // Errors through SqliteStatus: "SUBJECT: open: ..." when SQLite cannot
  // open `path`, else the failing step's.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                const SqliteOpenOptions& options,
                                                std::string_view subject);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* handle() const { return db_; }
  std::string_view subject() const { return subject_; }

  // The statement for `sql`, prepared on first use (SQLITE_PREPARE_PERSISTENT)
  // and kept until the connection closes: statements run often are parsed
  // once. Keyed by the address of `sql`, which must be a string literal (or
  // live as long and never change).
  Result<sqlite3_stmt*> Prepared(const char* sql);
  // A SqliteStmt borrowing Prepared(sql): reset, with no bindings, when it
  // ends.
  SqliteStmt Cached(const char* sql) { return SqliteStmt(db_, Prepared(sql), subject_); }
  // SqliteExec on this connection (not cached).
  Status Exec(const char* sql) { return SqliteExec(db_, sql, subject_); }

 private:
  SqliteDb(sqlite3* db, std::string_view subject) : db_(db), subject_(subject) {}
  Status EnableWal(const SqliteOpenOptions& options);

  sqlite3* db_;
  std::string_view subject_;
  // (sql, statement); a handful per store, so a scan beats hashing.
  std::vector<std::pair<const char*, sqlite3_stmt*>> prepared_;
};

// A transaction rolled back unless committed.
class SqliteTxn {
 public:
  SqliteTxn(sqlite3* db, std::string_view subject) : db_(db), subject_(subject) {}
  // BEGIN and COMMIT through the connection's cached statements (parsed once,
  // for a connection that runs many transactions).
  explicit SqliteTxn(SqliteDb& db) : db_(db.handle()), cache_(&db), subject_(db.subject()) {}
  ~SqliteTxn();
  SqliteTxn(const SqliteTxn&) = delete;
  SqliteTxn& operator=(const SqliteTxn&) = delete;
  // BEGIN IMMEDIATE for a write (the write lock taken at once), else BEGIN.
  Status Begin(bool write);
  Status Commit();

 private:
  Status Run(const char* sql);
  sqlite3* db_;
  SqliteDb* cache_ = nullptr;
  std::string_view subject_;
  bool active_ = false;
};

// Schema migrations, recorded in PRAGMA user_version: steps[i] takes the
// database from version i to i + 1. Never edit a shipped step: append one.
struct SqliteMigrations {
  std::span<const char* const> steps;
  // The error for a database at `version`, newer than steps.size(): written
  // by a newer build.
  std::function<Status(int64_t version)> newer;
  // Optional, run inside the migration's transaction with the version found:
  // `check` first (to refuse a database that is not this store's), `finish`
  // after the missing steps and the new user_version.
  std::function<Status(int64_t version)> check;
  std::function<Status(int64_t version)> finish;
};

// Brings the database to the latest version in one write transaction
// (BEGIN IMMEDIATE): reads user_version, runs `check`, refuses a negative
// version or a newer one, runs the missing steps, sets user_version, runs
// `finish`, commits. On any error the database is left as it was.
Status SqliteMigrate(SqliteDb& db, const SqliteMigrations& migrations);

}  // namespace cairn
