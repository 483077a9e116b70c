#include "server/sqlite_api_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iterator>

#include "base/sqlite.h"
#include "server/catalog.h"

namespace cairn::server {

// Errors mapped as the state store maps them (base/sqlite.h).
constexpr std::string_view kSubject = "server store";

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
    // 2: lists (and reference searches) read only live records: an index of
    // them alone, so a page costs the same however many deleted records
    // (kept for ever: their ids stay unused) lie before or among it. It
    // replaces resources_by_project_kind, which only these queries used.
    R"sql(
CREATE INDEX resources_live ON resources(project, kind, seq) WHERE status != 'deleted';
DROP INDEX resources_by_project_kind;
)sql",
};

// Every connection: WAL (readers beside the writer), synchronous=FULL (an
// acknowledged write survives power loss). Only the writer creates the file.
Result<std::unique_ptr<SqliteDb>> OpenDb(const std::string& path, bool writer) {
  SqliteOpenOptions options;
  options.create = writer;
  options.busy_timeout_ms = 5000;
  options.pragmas = {"PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"};
  return SqliteDb::Open(path, options, kSubject);
}

Status Migrate(SqliteDb& db) {
  SqliteMigrations m;
  m.steps = kMigrations;
  m.newer = [](int64_t version) {
    return Status::FailedPrecondition("the data directory has schema version " +
                                      std::to_string(version) + ", newer than this cairn (" +
                                      std::to_string(std::size(kMigrations)) + ")");
  };
  return SqliteMigrate(db, m);
}

Record ReadRecord(SqliteStmt& q) {
  Record r;
  r.seq = q.ColInt(0);
  r.id = q.ColText(1);
  r.project = q.ColText(2);
  r.kind = q.ColText(3);
  r.status = q.ColText(4);
  r.last_op = q.ColText(5);
  r.fate = q.ColText(6);
  r.next_step_ms = q.ColInt(7);  // NULL: 0
  r.created_at = q.ColText(8);
  r.attrs = nlohmann::json::parse(q.ColText(9), nullptr, /*allow_exceptions=*/false);
  return r;
}

// Every row of `q`, or its error.
Result<std::vector<Record>> ReadRecords(SqliteStmt& q) {
  std::vector<Record> out;
  while (q.Step()) out.push_back(ReadRecord(q));
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::optional<Record>> GetRecord(SqliteDb& db, const std::string& project,
                                        const std::string& id) {
  SqliteStmt q = db.Cached(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE id = ?1 AND project = ?2");
  if (q.Text(1, id).Text(2, project).Step()) return std::optional<Record>(ReadRecord(q));
  if (!q.status().ok()) return q.status();
  return std::optional<Record>();
}

Result<std::optional<StoredResponse>> GetStored(SqliteDb& db, const std::string& scope) {
  SqliteStmt q = db.Cached(
      "SELECT request_sha256, status, headers, body, created_ms FROM idempotency WHERE scope = ?1");
  if (!q.Text(1, scope).Step()) {
    if (!q.status().ok()) return q.status();
    return std::optional<StoredResponse>();
  }
  StoredResponse r;
  r.request_sha256 = q.ColText(0);
  r.status = static_cast<int>(q.ColInt(1));
  r.headers_json = q.ColText(2);
  r.body = q.ColText(3);
  r.created_ms = q.ColInt(4);
  return std::optional<StoredResponse>(std::move(r));
}

}  // namespace

// ---- WriteTxn ----

Result<std::optional<Record>> SqliteWriteTxn::Get(const std::string& project,
                                                  const std::string& id) {
  return GetRecord(*db_, project, id);
}

Status SqliteWriteTxn::Insert(Record* r) {
  SqliteStmt q = db_->Cached(
      "INSERT INTO resources(id, project, kind, status, last_op, fate, next_step_ms, created_at, "
      "attrs) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  q.Text(1, r->id).Text(2, r->project).Text(3, r->kind).Text(4, r->status);
  q.Text(5, r->last_op).Text(6, r->fate).Text(8, r->created_at).Text(9, r->attrs.dump());
  if (r->next_step_ms > 0) q.Int(7, r->next_step_ms);  // else NULL: nothing scheduled
  CAIRN_RETURN_IF_ERROR(q.Run());
  r->seq = sqlite3_last_insert_rowid(db_->handle());
  return Status::Ok();
}

Status SqliteWriteTxn::Update(const Record& r) {
  SqliteStmt q = db_->Cached(
      "UPDATE resources SET status = ?2, last_op = ?3, fate = ?4, next_step_ms = ?5, attrs = ?6 "
      "WHERE id = ?1");
  q.Text(1, r.id).Text(2, r.status).Text(3, r.last_op).Text(4, r.fate).Text(6, r.attrs.dump());
  if (r.next_step_ms > 0) q.Int(5, r.next_step_ms);
  return q.Run();
}

Result<std::vector<Record>> SqliteWriteTxn::FindReferencing(const std::string& project,
                                                            const char* kind, const char* field,
                                                            const std::string& value) {
  SqliteStmt q = db_->Cached(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE project = ?1 AND kind = ?2 AND status != 'deleted' "
      "AND instr(attrs, ?3) > 0 ORDER BY seq");
  q.Text(1, project).Text(2, kind).Text(3, value);
  std::vector<Record> out;
  while (q.Step()) {
    Record r = ReadRecord(q);
    const auto it = r.attrs.find(field);
    if (it == r.attrs.end()) continue;
    bool match = it->is_string() ? it->get<std::string>() == value : false;
    if (it->is_array()) {
      for (const auto& e : *it) match = match || (e.is_string() && e.get<std::string>() == value);
    }
    if (match) out.push_back(std::move(r));
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::optional<StoredResponse>> SqliteWriteTxn::GetResponse(const std::string& scope) {
  return GetStored(*db_, scope);
}

Status SqliteWriteTxn::PutResponse(const std::string& scope, const StoredResponse& r) {
  SqliteStmt q = db_->Cached(
      "INSERT OR REPLACE INTO idempotency(scope, request_sha256, status, headers, body, "
      "created_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  q.Text(1, scope).Text(2, r.request_sha256).Int(3, r.status).Text(4, r.headers_json);
  return q.Blob(5, r.body).Int(6, r.created_ms).Run();
}

Result<std::vector<Record>> SqliteWriteTxn::Due(int64_t now_ms, int limit) {
  SqliteStmt q = db_->Cached(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE next_step_ms IS NOT NULL AND next_step_ms <= ?1 "
      "ORDER BY next_step_ms LIMIT ?2");
  q.Int(1, now_ms).Int(2, limit);
  return ReadRecords(q);
}

Result<std::string> SqliteWriteTxn::AllocateIpv4(const std::string& region) {
  // The region's pool (catalog.h), its next host kept in ipv4_pool.
  if (Ipv4Address(region, 1).empty())
    return Status::NotFound("no address pool for region " + region);
  int64_t host = 1;
  {
    SqliteStmt q = db_->Cached("SELECT next_host FROM ipv4_pool WHERE region = ?1");
    if (q.Text(1, region).Step()) host = q.ColInt(0);
    if (!q.status().ok()) return q.status();
  }
  while (Ipv4HostSkipped(host)) ++host;
  std::string address = Ipv4Address(region, host);
  if (address.empty()) return Status::NotFound("address pool of " + region + " exhausted");
  SqliteStmt up = db_->Cached(
      "INSERT INTO ipv4_pool(region, next_host) VALUES(?1, ?2) "
      "ON CONFLICT(region) DO UPDATE SET next_host = excluded.next_host");
  CAIRN_RETURN_IF_ERROR(up.Text(1, region).Int(2, host + 1).Run());
  return address;
}

Status SqliteWriteTxn::PurgeResponses(int64_t older_than_ms) {
  return db_->Cached("DELETE FROM idempotency WHERE created_ms < ?1").Int(1, older_than_ms).Run();
}

Status SqliteWriteTxn::ReplaceTokens(
    const std::vector<std::pair<std::string, std::string>>& tokens) {
  CAIRN_RETURN_IF_ERROR(db_->Cached("DELETE FROM tokens").Run());
  for (const auto& [sha256, project] : tokens) {
    SqliteStmt q = db_->Cached(
        "INSERT INTO tokens(sha256, project) VALUES(?1, ?2) "
        "ON CONFLICT(sha256) DO UPDATE SET project = excluded.project");
    CAIRN_RETURN_IF_ERROR(q.Text(1, sha256).Text(2, project).Run());
  }
  return Status::Ok();
}

Status SqliteWriteTxn::CapSchedule(int64_t latest_ms) {
  SqliteStmt q = db_->Cached(
      "UPDATE resources SET next_step_ms = ?1 WHERE next_step_ms IS NOT NULL AND next_step_ms > "
      "?1");
  return q.Int(1, latest_ms).Run();
}

// ---- SqliteApiStore ----

class SqliteApiStore::ReadLease {
 public:
  ReadLease(SqliteApiStore* store, std::unique_ptr<SqliteDb> db, Status st)
      : store_(store), db_(std::move(db)), status_(std::move(st)) {}
  ReadLease(ReadLease&&) = default;
  ~ReadLease() {
    if (db_) {
      MutexLock lock(store_->read_mu_);
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
    MutexLock lock(read_mu_);
    if (!idle_readers_.empty()) {
      auto db = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return ReadLease(this, std::move(db), Status::Ok());
    }
  }
  auto db = OpenDb(path_, /*writer=*/false);
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
  store->lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (store->lock_fd_ < 0) return Status::IOError("cannot open " + lock_path);
  if (flock(store->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::FailedPrecondition("the data directory " + dir +
                                      " is in use by another cairn serve");
  }
  store->path_ = (std::filesystem::path(dir) / "cairn-server.db").string();
  // The database holds every project's resources and the token hashes:
  // 0600 like the engine's state, from the first byte. SQLite gives the WAL
  // and shared-memory files the database's mode; files of an older server
  // (0644) are tightened.
  // Never through a symbolic link planted at its path.
  int db_fd = open(store->path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (db_fd < 0) return Status::IOError("cannot open " + store->path_ + ": " + strerror(errno));
  close(db_fd);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::string path = store->path_ + suffix;
    if (chmod(path.c_str(), 0600) != 0 && errno != ENOENT) {
      return Status::IOError("cannot make " + path + " private (0600): " + strerror(errno));
    }
  }
  auto db = OpenDb(store->path_, /*writer=*/true);
  if (!db.ok()) return Status(db.status().code(), store->path_ + ": " + db.status().message());
  store->writer_db_ = std::move(db).value();
  SqliteDb* w = store->writer_db_.get();
  CAIRN_RETURN_IF_ERROR(Migrate(*w));
  // Checkpoints are the checkpointer's job, not the committing writer's.
  sqlite3_wal_autocheckpoint(w->handle(), 0);
  auto cdb = OpenDb(store->path_, /*writer=*/false);
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
    MutexLock lock(checkpoint_mu_);
    checkpoint_stop_ = true;
  }
  checkpoint_cv_.NotifyAll();
  if (checkpointer_.joinable()) checkpointer_.join();
  writer_db_.reset();
  checkpoint_db_.reset();
  {
    MutexLock lock(read_mu_);
    idle_readers_.clear();
  }
  if (lock_fd_ >= 0) close(lock_fd_);
}

void SqliteApiStore::CheckpointLoop() {
  for (;;) {
    {
      MutexLock lock(checkpoint_mu_);
      checkpoint_cv_.WaitUntil(checkpoint_mu_,
                               std::chrono::steady_clock::now() + std::chrono::milliseconds(250),
                               [&]() REQUIRES(checkpoint_mu_) { return checkpoint_stop_; });
      if (checkpoint_stop_) break;
    }
    // PASSIVE never blocks the writer or readers; it copies what it can.
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(checkpoint_db_->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                       &log, &done);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      spdlog::warn("store: WAL checkpoint failed: {}", sqlite3_errmsg(checkpoint_db_->handle()));
    }
  }
}

Status SqliteApiStore::RunBatch(std::vector<Pending>& batch, size_t* kept) {
  SqliteDb& db = *writer_db_;
  SqliteWriteTxn writes(&db);
  SqliteTxn txn(db);
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  for (Pending& p : batch) {
    CAIRN_RETURN_IF_ERROR(db.Cached("SAVEPOINT m").Run());
    bool keep = RunMutation(p.m, writes);
    if (!keep) CAIRN_RETURN_IF_ERROR(db.Cached("ROLLBACK TO m").Run());
    CAIRN_RETURN_IF_ERROR(db.Cached("RELEASE m").Run());
    *kept += keep ? 1 : 0;
  }
  return txn.Commit();
}

Result<std::optional<Record>> SqliteApiStore::Get(const std::string& project,
                                                  const std::string& id) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  return GetRecord(*lease.db(), project, id);
}

Result<std::vector<Record>> SqliteApiStore::List(const std::string& project,
                                                 const std::string& kind, int64_t after_seq,
                                                 int limit) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  SqliteStmt q = lease.db()->Cached(
      "SELECT seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs "
      "FROM resources WHERE project = ?1 AND kind = ?2 AND seq > ?3 AND status != 'deleted' "
      "ORDER BY seq LIMIT ?4");
  q.Text(1, project).Text(2, kind).Int(3, after_seq).Int(4, limit);
  return ReadRecords(q);
}

Result<std::optional<StoredResponse>> SqliteApiStore::GetResponse(const std::string& scope) {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  return GetStored(*lease.db(), scope);
}

Result<int64_t> SqliteApiStore::NextDueMs() {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  SqliteStmt q =
      lease.db()->Cached("SELECT MIN(next_step_ms) FROM resources WHERE next_step_ms IS NOT NULL");
  int64_t v = q.Step() ? q.ColInt(0) : 0;  // NULL (nothing scheduled): 0
  if (!q.status().ok()) return q.status();
  return v;
}

Result<std::vector<std::pair<std::string, std::string>>> SqliteApiStore::LoadTokens() {
  ReadLease lease = Lease();
  if (!lease.status().ok()) return lease.status();
  SqliteStmt q = lease.db()->Cached("SELECT sha256, project FROM tokens");
  std::vector<std::pair<std::string, std::string>> out;
  while (q.Step()) out.emplace_back(q.ColText(0), q.ColText(1));
  if (!q.status().ok()) return q.status();
  return out;
}

}  // namespace cairn::server
