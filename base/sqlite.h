// SQLite the one way both stores use it (the engine's state, the server's
// records): errors mapped to Status the same way, prepared statements whose
// errors stick, transactions rolled back unless committed. `subject` names
// the database in messages ("state database", "server store"); statements
// and transactions keep a view of it, so it must outlive them (a literal).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

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
  // Borrows a statement prepared once by its owner, and leaves it reset,
  // with no bindings, for the next use.
  SqliteStmt(sqlite3* db, const Result<sqlite3_stmt*>& reused, std::string_view subject);
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  SqliteStmt& Text(int i, const std::string& v);
  SqliteStmt& Blob(int i, const std::string& v);
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

// A transaction rolled back unless committed.
class SqliteTxn {
 public:
  SqliteTxn(sqlite3* db, std::string_view subject) : db_(db), subject_(subject) {}
  ~SqliteTxn();
  SqliteTxn(const SqliteTxn&) = delete;
  SqliteTxn& operator=(const SqliteTxn&) = delete;
  // BEGIN IMMEDIATE for a write (the write lock taken at once), else BEGIN.
  Status Begin(bool write);
  Status Commit();

 private:
  sqlite3* db_;
  std::string_view subject_;
  bool active_ = false;
};

}  // namespace cairn
