#include "base/sqlite.h"

namespace cairn {

Status SqliteStatus(sqlite3* db, int rc, std::string_view what, std::string_view subject) {
  std::string msg = std::string(subject) + ": " + std::string(what) + ": " +
                    (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg + " (another process keeps the " + std::string(subject) +
                                 " busy)");
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::FailedPrecondition(msg);
    default:
      return Status::IOError(msg);
  }
}

Status SqliteExec(sqlite3* db, const char* sql, std::string_view subject) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return SqliteStatus(nullptr, rc, msg, subject);
}

SqliteStmt::SqliteStmt(sqlite3* db, const char* sql, std::string_view subject)
    : db_(db), subject_(subject) {
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) status_ = SqliteStatus(db, rc, "prepare", subject_);
}

SqliteStmt::SqliteStmt(sqlite3* db, const Result<sqlite3_stmt*>& reused, std::string_view subject)
    : db_(db), subject_(subject), owned_(false) {
  if (reused.ok()) {
    stmt_ = *reused;
  } else {
    status_ = reused.status();
  }
}

SqliteStmt::~SqliteStmt() {
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

SqliteStmt& SqliteStmt::Text(int i, const std::string& v) {
  if (status_.ok())
    Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}

SqliteStmt& SqliteStmt::Blob(int i, const std::string& v) {
  if (status_.ok())
    Check(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}

SqliteStmt& SqliteStmt::Int(int i, int64_t v) {
  if (status_.ok()) Check(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

bool SqliteStmt::Step() {
  if (!status_.ok()) return false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status_ = SqliteStatus(db_, rc, sqlite3_sql(stmt_), subject_);
  return false;
}

Status SqliteStmt::Run() {
  while (Step()) {
  }
  return status_;
}

std::string SqliteStmt::ColText(int c) {
  const void* p = sqlite3_column_blob(stmt_, c);
  int n = sqlite3_column_bytes(stmt_, c);
  return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
}

int64_t SqliteStmt::ColInt(int c) { return sqlite3_column_int64(stmt_, c); }

void SqliteStmt::Check(int rc) {
  if (rc != SQLITE_OK && status_.ok()) status_ = SqliteStatus(db_, rc, "bind", subject_);
}

SqliteTxn::~SqliteTxn() {
  if (active_) (void)SqliteExec(db_, "ROLLBACK", subject_);
}

Status SqliteTxn::Begin(bool write) {
  CAIRN_RETURN_IF_ERROR(SqliteExec(db_, write ? "BEGIN IMMEDIATE" : "BEGIN", subject_));
  active_ = true;
  return Status::Ok();
}

Status SqliteTxn::Commit() {
  Status s = SqliteExec(db_, "COMMIT", subject_);
  if (s.ok()) active_ = false;
  return s;
}

}  // namespace cairn
