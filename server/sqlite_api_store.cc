#include "server/sqlite_api_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iterator>

#include "base/sqlite.h"
#include "server/catalog.h"

namespace cairn::server {
// One SQLite connection and its prepared statements. Not thread-safe: used
// by one thread at a time (the writer, or a reader holding a lease).
class SqliteDb {
 public:
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool writer);
  ~SqliteDb();
  Status Exec(const char* sql);
  // Exec through a cached prepared statement (for statements run per mutation).
  Status ExecCached(const char* sql);
  // A cached prepared statement keyed by the (static) SQL text, reset and
  // with bindings cleared.
  Result<sqlite3_stmt*> Prepare(const char* sql);
  sqlite3* handle() { return db_; }
  Status Error(const char* what);

 private:
  sqlite3* db_ = nullptr;
  std::vector<std::pair<const char*, sqlite3_stmt*>> stmts_;
};

// The statements of a mutation, on the writer's connection.
class SqliteWriteTxn final : public WriteTxn {
 public:
  explicit SqliteWriteTxn(SqliteDb* db) : db_(db) {}
  Result<std::optional<Record>> Get(const std::string& project, const std::string& id) override;
  Status Insert(Record* r) override;
  Status Update(const Record& r) override;
  Result<std::vector<Record>> FindReferencing(const std::string& project, const char* kind,
                                              const char* field, const std::string& value) override;
  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) override;
  Status PutResponse(const std::string& scope, const StoredResponse& r) override;
  Result<std::vector<Record>> Due(int64_t now_ms, int limit) override;
  Result<std::string> AllocateIpv4(const std::string& region) override;
  Status PurgeResponses(int64_t older_than_ms) override;
  Status CapSchedule(int64_t latest_ms) override;
  Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens) override;

 private:
  SqliteDb* db_;
};

namespace {

// Schema migrations, applied in order; PRAGMA user_version records how many
// have run. Never edit a shipped migration: append a new one.
constexpr const char* kMigrations[] = {
    // 1: initial schema.
    R"sql(
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
)sql",
};

// Resets a statement when leaving scope, so no read transaction stays open.
struct ResetOnExit {
  sqlite3_stmt* s;
  ~ResetOnExit() { sqlite3_reset(s); }
};

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s, col));
}

Record ReadRecord(sqlite3_stmt* s) {
  Record r;
  r.seq = sqlite3_column_int64(s, 0);
  r.id = Text(s, 1);
  r.project = Text(s, 2);
  r.kind = Text(s, 3);
  r.status = Text(s, 4);
  r.last_op = Text(s, 5);
  r.fate = Text(s, 6);
  r.next_step_ms = sqlite3_column_type(s, 7) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 7);
  r.created_at = Text(s, 8);
  r.attrs = nlohmann::json::parse(Text(s, 9), nullptr, /*allow_exceptions=*/false);
  return r;
}

void Bind(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

// Steps a statement that returns no rows.
Status StepDone(SqliteDb* db, sqlite3_stmt* s, const char* what) {
  int rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return db->Error(what);
  return Status::Ok();
}

Result<std::optional<Record>> GetRecord(SqliteDb* db, const std::string& project,
                                        const std::string& id) {
  auto st = db->Prepare(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE id = ?1 AND project = ?2");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, id);
  Bind(s, 2, project);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) return std::optional<Record>(ReadRecord(s));
  if (rc == SQLITE_DONE) return std::optional<Record>();
  return db->Error("reading a resource");
}

Result<std::optional<StoredResponse>> GetStored(SqliteDb* db, const std::string& scope) {
  auto st = db->Prepare(
      "SELECT request_sha256, status, headers, body, created_ms FROM idempotency WHERE scope = ?1");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, scope);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_DONE) return std::optional<StoredResponse>();
  if (rc != SQLITE_ROW) return db->Error("reading an idempotency record");
  StoredResponse r;
  r.request_sha256 = Text(s, 0);
  r.status = sqlite3_column_int(s, 1);
  r.headers_json = Text(s, 2);
  const void* b = sqlite3_column_blob(s, 3);
  r.body.assign(static_cast<const char*>(b), sqlite3_column_bytes(s, 3));
  r.created_ms = sqlite3_column_int64(s, 4);
  return std::optional<StoredResponse>(std::move(r));
}

}  // namespace

// ---- SqliteDb ----

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool writer) {
  auto db = std::unique_ptr<SqliteDb>(new SqliteDb());
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db->db_, flags, nullptr) != SQLITE_OK) {
    return Status::IOError("cannot open " + path + ": " +
                           (db->db_ ? sqlite3_errmsg(db->db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db->db_, 5000);
  CAIRN_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
  CAIRN_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=FULL"));
  CAIRN_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  return db;
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, s] : stmts_) sqlite3_finalize(s);
  if (db_ != nullptr) sqlite3_close(db_);
}

// Errors mapped as the state store maps them (base/sqlite.h).
constexpr std::string_view kSubject = "server store";

Status SqliteDb::Error(const char* what) {
  return SqliteStatus(db_, sqlite3_extended_errcode(db_), what, kSubject);
}

Status SqliteDb::Exec(const char* sql) { return SqliteExec(db_, sql, kSubject); }

Status SqliteDb::ExecCached(const char* sql) {
  auto st = Prepare(sql);
  if (!st.ok()) return st.status();
  int rc = sqlite3_step(*st);
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return Error(sql);
  return Status::Ok();
}

Result<sqlite3_stmt*> SqliteDb::Prepare(const char* sql) {
  for (auto& [key, s] : stmts_) {
    if (key == sql) {
      sqlite3_reset(s);
      sqlite3_clear_bindings(s);
      return s;
    }
  }
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
    return Error("prepare");
  }
  stmts_.emplace_back(sql, s);
  return s;
}

// ---- WriteTxn ----

Result<std::optional<Record>> SqliteWriteTxn::Get(const std::string& project,
                                                  const std::string& id) {
  return GetRecord(db_, project, id);
}

Status SqliteWriteTxn::Insert(Record* r) {
  auto st = db_->Prepare(
      "INSERT INTO resources(id, project, kind, status, last_op, fate, next_step_ms, created_at, "
      "attrs) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, r->id);
  Bind(s, 2, r->project);
  Bind(s, 3, r->kind);
  Bind(s, 4, r->status);
  Bind(s, 5, r->last_op);
  Bind(s, 6, r->fate);
  if (r->next_step_ms > 0) sqlite3_bind_int64(s, 7, r->next_step_ms);
  Bind(s, 8, r->created_at);
  Bind(s, 9, r->attrs.dump());
  CAIRN_RETURN_IF_ERROR(StepDone(db_, s, "inserting a resource"));
  r->seq = sqlite3_last_insert_rowid(db_->handle());
  return Status::Ok();
}

Status SqliteWriteTxn::Update(const Record& r) {
  auto st = db_->Prepare(
      "UPDATE resources SET status = ?2, last_op = ?3, fate = ?4, next_step_ms = ?5, attrs = ?6 "
      "WHERE id = ?1");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, r.id);
  Bind(s, 2, r.status);
  Bind(s, 3, r.last_op);
  Bind(s, 4, r.fate);
  if (r.next_step_ms > 0) sqlite3_bind_int64(s, 5, r.next_step_ms);
  Bind(s, 6, r.attrs.dump());
  return StepDone(db_, s, "updating a resource");
}

Result<std::vector<Record>> SqliteWriteTxn::FindReferencing(const std::string& project,
                                                            const char* kind, const char* field,
                                                            const std::string& value) {
  auto st = db_->Prepare(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE project = ?1 AND kind = ?2 AND status != 'deleted' "
      "AND instr(attrs, ?3) > 0 ORDER BY seq");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, project);
  Bind(s, 2, kind);
  Bind(s, 3, value);
  std::vector<Record> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    Record r = ReadRecord(s);
    const auto it = r.attrs.find(field);
    if (it == r.attrs.end()) continue;
    bool match = it->is_string() ? it->get<std::string>() == value : false;
    if (it->is_array()) {
      for (const auto& e : *it) match = match || (e.is_string() && e.get<std::string>() == value);
    }
    if (match) out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return db_->Error("finding references");
  return out;
}

Result<std::optional<StoredResponse>> SqliteWriteTxn::GetResponse(const std::string& scope) {
  return GetStored(db_, scope);
}

Status SqliteWriteTxn::PutResponse(const std::string& scope, const StoredResponse& r) {
  auto st = db_->Prepare(
      "INSERT OR REPLACE INTO idempotency(scope, request_sha256, status, headers, body, "
      "created_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, scope);
  Bind(s, 2, r.request_sha256);
  sqlite3_bind_int(s, 3, r.status);
  Bind(s, 4, r.headers_json);
  sqlite3_bind_blob(s, 5, r.body.data(), static_cast<int>(r.body.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 6, r.created_ms);
  return StepDone(db_, s, "storing an idempotency record");
}

Result<std::vector<Record>> SqliteWriteTxn::Due(int64_t now_ms, int limit) {
  auto st = db_->Prepare(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE next_step_ms IS NOT NULL AND next_step_ms <= ?1 "
      "ORDER BY next_step_ms LIMIT ?2");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  sqlite3_bind_int64(s, 1, now_ms);
  sqlite3_bind_int(s, 2, limit);
  std::vector<Record> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(ReadRecord(s));
  if (rc != SQLITE_DONE) return db_->Error("reading due records");
  return out;
}

Result<std::string> SqliteWriteTxn::AllocateIpv4(const std::string& region) {
  // Each region of the catalog owns a /16 of the shared address space
  // 100.64.0.0/10, in catalog order: eu-central 100.64, us-east 100.65, ...
  int second = -1;
  for (size_t i = 0; i < std::size(kRegions); ++i) {
    if (kRegions[i].key == region) second = 64 + static_cast<int>(i);
  }
  if (second < 0 || second > 127) return Status::NotFound("no address pool for region " + region);
  auto st = db_->Prepare("SELECT next_host FROM ipv4_pool WHERE region = ?1");
  if (!st.ok()) return st.status();
  ResetOnExit reset{*st};
  Bind(*st, 1, region);
  int64_t host = 1;
  int rc = sqlite3_step(*st);
  if (rc == SQLITE_ROW)
    host = sqlite3_column_int64(*st, 0);
  else if (rc != SQLITE_DONE)
    return db_->Error("reading the address pool");
  // Skip network (.0) and broadcast-looking (.255) last octets.
  while ((host & 0xff) == 0 || (host & 0xff) == 255) ++host;
  if (host >= 65535) return Status::NotFound("address pool of " + region + " exhausted");
  auto up = db_->Prepare(
      "INSERT INTO ipv4_pool(region, next_host) VALUES(?1, ?2) "
      "ON CONFLICT(region) DO UPDATE SET next_host = excluded.next_host");
  if (!up.ok()) return up.status();
  Bind(*up, 1, region);
  sqlite3_bind_int64(*up, 2, host + 1);
  ResetOnExit reset_up{*up};
  CAIRN_RETURN_IF_ERROR(StepDone(db_, *up, "updating the address pool"));
  return "100." + std::to_string(second) + "." + std::to_string(host >> 8) + "." +
         std::to_string(host & 0xff);
}

Status SqliteWriteTxn::PurgeResponses(int64_t older_than_ms) {
  auto st = db_->Prepare("DELETE FROM idempotency WHERE created_ms < ?1");
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, older_than_ms);
  return StepDone(db_, *st, "purging idempotency records");
}

Status SqliteWriteTxn::ReplaceTokens(
    const std::vector<std::pair<std::string, std::string>>& tokens) {
  CAIRN_RETURN_IF_ERROR(db_->ExecCached("DELETE FROM tokens"));
  auto st = db_->Prepare(
      "INSERT INTO tokens(sha256, project) VALUES(?1, ?2) "
      "ON CONFLICT(sha256) DO UPDATE SET project = excluded.project");
  if (!st.ok()) return st.status();
  for (const auto& [sha256, project] : tokens) {
    sqlite3_reset(*st);
    Bind(*st, 1, sha256);
    Bind(*st, 2, project);
    CAIRN_RETURN_IF_ERROR(StepDone(db_, *st, "storing a token hash"));
  }
  return Status::Ok();
}

Status SqliteWriteTxn::CapSchedule(int64_t latest_ms) {
  auto st = db_->Prepare(
      "UPDATE resources SET next_step_ms = ?1 WHERE next_step_ms IS NOT NULL AND next_step_ms > "
      "?1");
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, latest_ms);
  return StepDone(db_, *st, "rescheduling lifecycle steps");
}

// ---- SqliteApiStore ----

class SqliteApiStore::ReadLease {
 public:
  ReadLease(SqliteApiStore* store, std::unique_ptr<SqliteDb> db, Status st)
      : store_(store), db_(std::move(db)), status_(std::move(st)) {}
  ReadLease(ReadLease&&) = default;
  ~ReadLease() {
    if (db_) {
      std::lock_guard<std::mutex> lock(store_->read_mu_);
      store_->idle_readers_.push_back(std::move(db_));
    }
  }
  SqliteDb* db() { return db_.get(); }
  const Status& status() const { return status_; }

 private:
  SqliteApiStore* store_;
  std::unique_ptr<SqliteDb> db_;
  Status status_;
};

SqliteApiStore::ReadLease SqliteApiStore::Lease() {
  {
    std::lock_guard<std::mutex> lock(read_mu_);
    if (!idle_readers_.empty()) {
      auto db = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return ReadLease(this, std::move(db), Status::Ok());
    }
  }
  auto db = SqliteDb::Open(path_, false);
  if (!db.ok()) return ReadLease(this, nullptr, db.status());
  return ReadLease(this, std::move(db).value(), Status::Ok());
}

Result<std::unique_ptr<ApiStore>> SqliteApiStore::Open(const std::string& dir,
                                                       StoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create data directory " + dir + ": " + ec.message());
  auto store = std::unique_ptr<SqliteApiStore>(new SqliteApiStore(options));
  std::string lock_path = (std::filesystem::path(dir) / "LOCK").string();
  store->lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (store->lock_fd_ < 0) return Status::IOError("cannot open " + lock_path);
  if (flock(store->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::FailedPrecondition("the data directory " + dir +
                                      " is in use by another cairn serve");
  }
  store->path_ = (std::filesystem::path(dir) / "cairn-server.db").string();
  auto db = SqliteDb::Open(store->path_, true);
  if (!db.ok()) return db.status();
  store->writer_db_ = std::move(db).value();
  SqliteDb* w = store->writer_db_.get();
  // Migrations.
  auto v = w->Prepare("PRAGMA user_version");
  if (!v.ok()) return v.status();
  if (sqlite3_step(*v) != SQLITE_ROW) return w->Error("reading the schema version");
  int version = sqlite3_column_int(*v, 0);
  sqlite3_reset(*v);
  constexpr int kLatest = static_cast<int>(std::size(kMigrations));
  if (version > kLatest) {
    return Status::FailedPrecondition("the data directory has schema version " +
                                      std::to_string(version) + ", newer than this cairn (" +
                                      std::to_string(kLatest) + ")");
  }
  for (int i = version; i < kLatest; ++i) {
    CAIRN_RETURN_IF_ERROR(w->Exec("BEGIN IMMEDIATE"));
    Status st = w->Exec(kMigrations[i]);
    if (st.ok()) st = w->Exec(("PRAGMA user_version = " + std::to_string(i + 1)).c_str());
    if (!st.ok()) {
      (void)w->Exec("ROLLBACK");
      return st;
    }
    CAIRN_RETURN_IF_ERROR(w->Exec("COMMIT"));
  }
  // Checkpoints are the checkpointer's job, not the committing writer's.
  sqlite3_wal_autocheckpoint(w->handle(), 0);
  auto cdb = SqliteDb::Open(store->path_, false);
  if (!cdb.ok()) return cdb.status();
  store->checkpoint_db_ = std::move(cdb).value();
  store->StartWriter();
  store->checkpointer_ = std::thread([s = store.get()] { s->CheckpointLoop(); });
  return std::unique_ptr<ApiStore>(std::move(store));
}

SqliteApiStore::SqliteApiStore(StoreOptions options) : ApiStore(options) {}

SqliteApiStore::~SqliteApiStore() {
  Close();
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    checkpoint_stop_ = true;
  }
  checkpoint_cv_.notify_all();
  if (checkpointer_.joinable()) checkpointer_.join();
  writer_db_.reset();
  checkpoint_db_.reset();
  idle_readers_.clear();
  if (lock_fd_ >= 0) close(lock_fd_);
}

void SqliteApiStore::CheckpointLoop() {
  std::unique_lock<std::mutex> lock(checkpoint_mu_);
  while (!checkpoint_stop_) {
    checkpoint_cv_.wait_for(lock, std::chrono::milliseconds(250), [&] { return checkpoint_stop_; });
    if (checkpoint_stop_) break;
    lock.unlock();
    // PASSIVE never blocks the writer or readers; it copies what it can.
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(checkpoint_db_->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                       &log, &done);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      spdlog::warn("store: WAL checkpoint failed: {}", sqlite3_errmsg(checkpoint_db_->handle()));
    }
    lock.lock();
  }
}

Status SqliteApiStore::RunBatch(std::vector<Pending>& batch, size_t* kept) {
  SqliteDb* db = writer_db_.get();
  SqliteWriteTxn txn(db);
  Status st = db->ExecCached("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  for (Pending& p : batch) {
    if (!(st = db->ExecCached("SAVEPOINT m")).ok()) break;
    bool keep = RunMutation(p.m, txn);
    if (!keep) st = db->ExecCached("ROLLBACK TO m");
    if (st.ok()) st = db->ExecCached("RELEASE m");
    if (!st.ok()) break;
    *kept += keep ? 1 : 0;
  }
  if (st.ok()) st = db->ExecCached("COMMIT");
  if (!st.ok()) (void)db->Exec("ROLLBACK");
  return st;
}

Result<std::optional<Record>> SqliteApiStore::Get(const std::string& project,
                                                  const std::string& id) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  return GetRecord(lease.db(), project, id);
}

Result<std::vector<Record>> SqliteApiStore::List(const std::string& project,
                                                 const std::string& kind, int64_t after_seq,
                                                 int limit) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  SqliteDb* db = lease.db();
  auto st = db->Prepare(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE project = ?1 AND kind = ?2 AND seq > ?3 AND status != 'deleted' "
      "ORDER BY seq LIMIT ?4");
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = *st;
  ResetOnExit reset{s};
  Bind(s, 1, project);
  Bind(s, 2, kind);
  sqlite3_bind_int64(s, 3, after_seq);
  sqlite3_bind_int(s, 4, limit);
  std::vector<Record> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(ReadRecord(s));
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return db->Error("listing resources");
  return out;
}

Result<std::optional<StoredResponse>> SqliteApiStore::GetResponse(const std::string& scope) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  auto r = GetStored(lease.db(), scope);
  return r;
}

Result<int64_t> SqliteApiStore::NextDueMs() {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  auto st =
      lease.db()->Prepare("SELECT MIN(next_step_ms) FROM resources WHERE next_step_ms IS NOT NULL");
  if (!st.ok()) return st.status();
  int rc = sqlite3_step(*st);
  int64_t v = 0;
  if (rc == SQLITE_ROW && sqlite3_column_type(*st, 0) != SQLITE_NULL)
    v = sqlite3_column_int64(*st, 0);
  sqlite3_reset(*st);
  return v;
}

Result<std::vector<std::pair<std::string, std::string>>> SqliteApiStore::LoadTokens() {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  auto st = lease.db()->Prepare("SELECT sha256, project FROM tokens");
  if (!st.ok()) return st.status();
  std::vector<std::pair<std::string, std::string>> out;
  while (sqlite3_step(*st) == SQLITE_ROW) out.emplace_back(Text(*st, 0), Text(*st, 1));
  sqlite3_reset(*st);
  return out;
}

}  // namespace cairn::server
