#include "base/sqlite.h"

#include <cassert>
#include <chrono>
#include <cstring>

namespace cairn {
namespace {

// One address per text, for the statement cache.
constexpr const char* kBeginDeferred = "BEGIN";
constexpr const char* kBeginImmediate = "BEGIN IMMEDIATE";
constexpr const char* kCommit = "COMMIT";

}  // namespace

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

SqliteStmt::SqliteStmt(SqliteDb& db, const char* sql)
    : SqliteStmt(db.handle(), sql, db.subject()) {}

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

SqliteStmt& SqliteStmt::Text(int i, std::string_view v) {
  if (status_.ok())
    Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}

SqliteStmt& SqliteStmt::Blob(int i, std::string_view v) {
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

// ---- SqliteDb ----

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                 const SqliteOpenOptions& options,
                                                 std::string_view subject) {
  sqlite3* handle = nullptr;
  const int flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (options.create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteStatus(handle, rc, "open", subject);
    sqlite3_close(handle);
    return s;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(handle, subject));
  sqlite3_busy_timeout(handle, options.busy_timeout_ms);
  if (options.extended_result_codes) sqlite3_extended_result_codes(handle, 1);
  if (options.wal) CAIRN_RETURN_IF_ERROR(db->EnableWal(options));
  for (const char* pragma : options.pragmas) CAIRN_RETURN_IF_ERROR(db->Exec(pragma));
  return db;
}

Status SqliteDb::EnableWal(const SqliteOpenOptions& options) {
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock();
  const auto deadline = clock.Now() + std::chrono::milliseconds(options.busy_timeout_ms);
  const std::string prefix(subject_);
  while (true) {
    SqliteStmt wal(db_, "PRAGMA journal_mode = WAL", subject_);
    if (wal.Step()) {
      if (wal.ColText(0) == "wal") return Status::Ok();
      return Status::IOError(prefix + ": cannot enable WAL (journal mode " + wal.ColText(0) + ")");
    }
    Status s = wal.status();
    if (s.ok()) return Status::IOError(prefix + ": cannot enable WAL");
    if (s.code() != StatusCode::kUnavailable || clock.Now() >= deadline) return s;
    clock.SleepFor(std::chrono::milliseconds(5), {});
  }
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : prepared_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Result<sqlite3_stmt*> SqliteDb::Prepared(const char* sql) {
  for (const auto& [key, stmt] : prepared_) {
    if (key == sql) {
      assert(std::strcmp(key, sql) == 0);
      return stmt;
    }
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(db_, rc, "prepare", subject_);
  }
  prepared_.emplace_back(sql, stmt);
  return stmt;
}

// ---- SqliteTxn ----

SqliteTxn::~SqliteTxn() {
  if (active_) (void)SqliteExec(db_, "ROLLBACK", subject_);
}

Status SqliteTxn::Run(const char* sql) {
  if (cache_ != nullptr) return cache_->Cached(sql).Run();
  return SqliteExec(db_, sql, subject_);
}

Status SqliteTxn::Begin(bool write) {
  CAIRN_RETURN_IF_ERROR(Run(write ? kBeginImmediate : kBeginDeferred));
  active_ = true;
  return Status::Ok();
}

Status SqliteTxn::Commit() {
  Status s = Run(kCommit);
  if (s.ok()) active_ = false;
  return s;
}

// ---- SqliteMigrate ----

Status SqliteMigrate(SqliteDb& db, const SqliteMigrations& m) {
  SqliteTxn txn(db.handle(), db.subject());
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  int64_t version = 0;
  {
    SqliteStmt q(db, "PRAGMA user_version");
    if (!q.Step()) {
      CAIRN_RETURN_IF_ERROR(q.status());
      return Status::Internal(std::string(db.subject()) + ": no row for PRAGMA user_version");
    }
    version = q.ColInt(0);
  }
  if (m.check) CAIRN_RETURN_IF_ERROR(m.check(version));
  const auto latest = static_cast<int64_t>(m.steps.size());
  if (version < 0) {
    return Status::FailedPrecondition(std::string(db.subject()) + ": unknown schema version " +
                                      std::to_string(version));
  }
  if (version > latest) return m.newer(version);
  for (int64_t v = version; v < latest; ++v) CAIRN_RETURN_IF_ERROR(db.Exec(m.steps[v]));
  if (version != latest) {
    const std::string set = "PRAGMA user_version = " + std::to_string(latest);
    CAIRN_RETURN_IF_ERROR(db.Exec(set.c_str()));
  }
  if (m.finish) CAIRN_RETURN_IF_ERROR(m.finish(version));
  return txn.Commit();
}

}  // namespace cairn
