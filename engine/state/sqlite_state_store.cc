#include "engine/state/sqlite_state_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "base/sqlite.h"
#include "engine/state/commit_check.h"
#include "engine/state/state_lock.h"

namespace cairn {
namespace {

constexpr int kApplicationId = 0x4341524E;  // "CARN"
constexpr int kBusyTimeoutMs = 10000;

// Migration N (1-based) takes a file from format version N-1 to N.
const char* const kMigrations[] = {
    // 1: the first layout.
    R"sql(
      CREATE TABLE meta (slot INTEGER PRIMARY KEY CHECK (slot = 1), lineage TEXT NOT NULL,
                         serial INTEGER NOT NULL, format_version INTEGER NOT NULL);
      CREATE TABLE resources (address TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL,
                              attributes TEXT NOT NULL, depends_on TEXT NOT NULL,
                              schema_version INTEGER NOT NULL);
      CREATE TABLE journal (seq INTEGER PRIMARY KEY, address TEXT NOT NULL, action TEXT NOT NULL,
                            kind TEXT NOT NULL, remote_id TEXT NOT NULL, method TEXT NOT NULL,
                            path TEXT NOT NULL, body BLOB NOT NULL,
                            idempotency_key TEXT NOT NULL, started_at INTEGER NOT NULL);
      CREATE TABLE sequence (slot INTEGER PRIMARY KEY CHECK (slot = 1), last INTEGER NOT NULL);
      CREATE TABLE lock (slot INTEGER PRIMARY KEY CHECK (slot = 1), id TEXT NOT NULL,
                         holder TEXT NOT NULL, operation TEXT NOT NULL,
                         created_at INTEGER NOT NULL);
    )sql",
    // 2: outputs, and what a recovered journal entry needs to commit.
    R"sql(
      CREATE TABLE outputs (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      ALTER TABLE journal ADD COLUMN context TEXT NOT NULL DEFAULT '{}';
    )sql",
    // 3: resources whose provisioning failed.
    R"sql(
      ALTER TABLE resources ADD COLUMN tainted TEXT NOT NULL DEFAULT '';
    )sql",
    // 4: which outputs are sensitive (NULL: recorded before, taken as sensitive).
    R"sql(
      ALTER TABLE outputs ADD COLUMN sensitive INTEGER;
    )sql",
    // 5: the encryption at rest of the records (engine/state/state_cipher.h).
    R"sql(
      CREATE TABLE encryption (slot INTEGER PRIMARY KEY CHECK (slot = 1), salt BLOB NOT NULL,
                               key_id TEXT NOT NULL);
    )sql",
};
static_assert(std::size(kMigrations) == kSqliteStateFormatVersion);

// The toolkit of base/sqlite.h, the database named "state database" in
// every message.
constexpr std::string_view kSubject = "state database";

using Stmt = SqliteStmt;

struct Txn : SqliteTxn {
  explicit Txn(SqliteDb& db) : SqliteTxn(db.handle(), kSubject) {}
};

Result<Value> ParseStoredJson(const std::string& text, const std::string& what) {
  auto v = ParseJson(text);
  if (!v.ok()) {
    return Status::FailedPrecondition("state database: " + what + ": " + v.status().message());
  }
  return v;
}

// Never throws: invalid UTF-8 (which the API does not send) is replaced.
std::string DumpJson(const Value& v) {
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

// Creates the missing directories of `dir`, each 0700.
Status MakeDirs(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(MakeDirs(dir.parent_path()));
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError("cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<int64_t> QueryInt(SqliteDb& db, const char* sql) {
  Stmt q(db, sql);
  if (!q.Step()) {
    return q.status().ok() ? Result<int64_t>(Status::Internal(std::string("no row for ") + sql))
                           : Result<int64_t>(q.status());
  }
  return q.ColInt(0);
}

Status Migrate(SqliteDb& db) {
  int64_t app = 0;
  SqliteMigrations m;
  m.steps = kMigrations;
  m.check = [&](int64_t version) -> Status {
    Result<int64_t> id = QueryInt(db, "PRAGMA application_id");
    if (!id.ok()) return id.status();
    app = *id;
    if (app != 0 && app != kApplicationId) {
      return Status::FailedPrecondition("not a Cairn state file (application_id " +
                                        std::to_string(app) + ")");
    }
    if (version < 0) {
      return Status::FailedPrecondition("not a Cairn state file (format version " +
                                        std::to_string(version) + ")");
    }
    if (version == 0) {
      // A version-0 file must be empty: refuse to take over someone's database.
      Result<int64_t> tables = QueryInt(db, "SELECT count(*) FROM sqlite_master");
      if (!tables.ok()) return tables.status();
      if (*tables != 0) {
        return Status::FailedPrecondition("not a Cairn state file (it has tables of its own)");
      }
    }
    return Status::Ok();
  };
  m.newer = [](int64_t version) {
    return Status::FailedPrecondition(
        "state file has format version " + std::to_string(version) +
        ", written by a newer Cairn; this Cairn reads format versions up to " +
        std::to_string(kSqliteStateFormatVersion) + ": upgrade cairn");
  };
  m.finish = [&](int64_t version) -> Status {
    if (version != kSqliteStateFormatVersion || app == 0) {
      const std::string stamp =
          "PRAGMA application_id = " + std::to_string(kApplicationId) +
          "; UPDATE meta SET format_version = " + std::to_string(kSqliteStateFormatVersion) + ";";
      CAIRN_RETURN_IF_ERROR(db.Exec(stamp.c_str()));
    }
    Result<int64_t> metas = QueryInt(db, "SELECT count(*) FROM meta");
    if (!metas.ok()) return metas.status();
    if (*metas == 0) {
      Result<std::string> lineage = RandomUuid();
      if (!lineage.ok()) return lineage.status();
      Stmt ins(db, "INSERT INTO meta (slot, lineage, serial, format_version) VALUES (1, ?, 0, ?)");
      CAIRN_RETURN_IF_ERROR(ins.Text(1, *lineage).Int(2, kSqliteStateFormatVersion).Run());
      CAIRN_RETURN_IF_ERROR(db.Exec("INSERT OR IGNORE INTO sequence (slot, last) VALUES (1, 0)"));
    }
    Result<int64_t> salts = QueryInt(db, "SELECT count(*) FROM encryption");
    if (!salts.ok()) return salts.status();
    if (*salts == 0) {
      Result<std::string> salt = StateCipher::NewSalt();
      if (!salt.ok()) return salt.status();
      Stmt ins(db, "INSERT INTO encryption (slot, salt, key_id) VALUES (1, ?, '')");
      CAIRN_RETURN_IF_ERROR(ins.Blob(1, *salt).Run());
    }
    return Status::Ok();
  };
  return SqliteMigrate(db, m);
}

}  // namespace

std::string SqliteStateStore::DefaultPath(const std::string& stack_root) {
  return (std::filesystem::path(stack_root) / ".cairn" / "state.db").string();
}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::Open(const std::string& path,
                                                                 Clock* clock) {
  SqliteStateOptions options;
  options.clock = clock;
  return Open(path, options);
}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::OpenExisting(const std::string& path,
                                                                         Clock* clock) {
  SqliteStateOptions options;
  options.clock = clock;
  return OpenExisting(path, options);
}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::Open(
    const std::string& path, const SqliteStateOptions& options) {
  Result<std::unique_ptr<SqliteStateStore>> store = OpenAndMigrate(path, options);
  if (!store.ok()) {
    return Status(store.status().code(), path + ": " + store.status().message());
  }
  return store;
}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::OpenExisting(
    const std::string& path, const SqliteStateOptions& options) {
  // Size of `file`, or -1 when it does not exist.
  auto size = [](const std::string& file) -> Result<int64_t> {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) return static_cast<int64_t>(st.st_size);
    if (errno == ENOENT || errno == ENOTDIR) return int64_t{-1};
    return Status::IOError("cannot read " + file + ": " + std::strerror(errno));
  };
  Result<int64_t> db = size(path);
  if (!db.ok()) return db.status();
  // An empty file with no WAL beside it never had a transaction committed:
  // the migration that makes a state is one.
  Result<int64_t> wal = *db == 0 ? size(path + "-wal") : Result<int64_t>(int64_t{-1});
  if (!wal.ok()) return wal.status();
  if (*db < 0 || (*db == 0 && *wal <= 0)) return Status::NotFound("no state at " + path);
  return Open(path, options);
}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::OpenAndMigrate(
    const std::string& path, const SqliteStateOptions& state_options) {
  Clock* clock = state_options.clock;
  CAIRN_RETURN_IF_ERROR(MakeDirs(std::filesystem::path(path).parent_path()));
  // Create the file ourselves so that it is 0600 from the first byte. Never
  // through a symbolic link: one planted at the state's path in a shared
  // directory would send the state, and SQLite's writes, elsewhere.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == ELOOP) {
    return Status::FailedPrecondition(path +
                                      " is a symbolic link: the state is not opened through one");
  }
  if (fd < 0) return Status::IOError(std::string("cannot open: ") + std::strerror(errno));
  ::close(fd);

  SqliteOpenOptions options;
  options.busy_timeout_ms = kBusyTimeoutMs;
  options.extended_result_codes = true;
  options.clock = clock;
  options.pragmas = {"PRAGMA synchronous = FULL"};
  // With encryption, a record rewritten or deleted leaves no plaintext in a
  // free page or the unused part of a page (what a migration leaves behind).
  if (state_options.encryption.configured()) options.pragmas.push_back("PRAGMA secure_delete = ON");
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, options, kSubject);
  if (!db.ok()) return db.status();
  CAIRN_RETURN_IF_ERROR(Migrate(**db));
  std::unique_ptr<SqliteStateStore> store(new SqliteStateStore(path, std::move(*db), clock));
  CAIRN_RETURN_IF_ERROR(store->SetUpEncryption(state_options));
  return store;
}

Status SqliteStateStore::SetUpEncryption(const SqliteStateOptions& options) {
  MutexLock lock(mu_);
  for_rekey_ = options.for_rekey;
  std::string salt, state_key;
  {
    Stmt q(*db_, "SELECT salt, key_id FROM encryption WHERE slot = 1");
    if (!q.Step()) {
      return q.status().ok() ? Status::FailedPrecondition("state database has no encryption row")
                             : q.status();
    }
    salt = q.ColText(0);
    state_key = q.ColText(1);
  }
  if (options.encryption.configured()) {
    Result<std::unique_ptr<StateCipher>> cipher =
        StateCipher::Create(options.encryption, salt, options.stack_root);
    if (!cipher.ok()) return cipher.status();
    cipher_ = std::move(*cipher);
  }
  Result<int64_t> records =
      QueryInt(*db_,
               "SELECT EXISTS (SELECT 1 FROM resources) OR EXISTS (SELECT 1 FROM outputs) OR "
               "EXISTS (SELECT 1 FROM journal)");
  if (!records.ok()) return records.status();
  Result<StateKeyCheck> check = CheckStateKey(cipher_.get(), state_key, *records > 0, for_rekey_);
  if (!check.ok()) return check.status();
  if (check->take_over) {
    // A new (or empty) state is encrypted from the start; the records are
    // counted again inside the write, against a racing writer.
    Txn txn(*db_);
    CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
    Stmt mark(*db_,
              "UPDATE encryption SET key_id = ? WHERE slot = 1 AND key_id = '' AND NOT EXISTS "
              "(SELECT 1 FROM resources) AND NOT EXISTS (SELECT 1 FROM outputs) AND NOT EXISTS "
              "(SELECT 1 FROM journal)");
    CAIRN_RETURN_IF_ERROR(mark.Text(1, cipher_->key_id()).Run());
    const bool marked = sqlite3_changes(db_->handle()) == 1;
    CAIRN_RETURN_IF_ERROR(txn.Commit());
    if (!marked) {
      return Status::Conflict(
          "another process wrote the state while it was being opened with encryption: run the "
          "command again");
    }
  }
  sealed_ = check->sealed;
  return Status::Ok();
}

Result<std::string> SqliteStateStore::Stored(std::string plain, std::string_view record_kind) {
  return SealStored(cipher_.get(), sealed_, std::move(plain), record_kind);
}

Result<std::string> SqliteStateStore::Plain(std::string stored, std::string_view record_kind,
                                            std::string_view what) {
  return OpenStored(cipher_.get(), sealed_, for_rekey_, std::move(stored), record_kind, what);
}

SqliteStateStore::SqliteStateStore(std::string path, std::unique_ptr<SqliteDb> db, Clock* clock)
    : path_(std::move(path)), clock_(clock), db_(std::move(db)) {}

SqliteStateStore::~SqliteStateStore() {
  MutexLock lock(mu_);
  if (watch_fd_ >= 0) close(watch_fd_);
}

Result<bool> SqliteStateStore::TryWatchLease(const std::string& me, std::string* holder) {
  MutexLock lock(mu_);
  if (watch_fd_ >= 0) return true;
  const std::string file = path_ + ".watch";
  // O_NOFOLLOW: never through a link someone put in the state's place.
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open " + file + ": " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK && holder != nullptr) {
      char buf[512];
      ssize_t n = pread(fd, buf, sizeof buf, 0);
      holder->assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
      while (!holder->empty() && (holder->back() == '\n' || holder->back() == '\0')) {
        holder->pop_back();
      }
    }
    close(fd);
    if (err == EWOULDBLOCK) return false;
    return Status::Unavailable("cannot lock " + file + ": " + std::strerror(err));
  }
  // Who holds it, for the watchers that find it taken.
  const std::string line = me + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, line.data(), line.size(), 0) < 0) {
    close(fd);  // releases the lock
    return Status::Unavailable("cannot write " + file + ": " + std::strerror(errno));
  }
  watch_fd_ = fd;
  return true;
}

Result<StateSnapshot> SqliteStateStore::Load() {
  MutexLock lock(mu_);
  Txn txn(*db_);
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/false));
  StateSnapshot snap;
  {
    Stmt q(*db_, "SELECT lineage, serial FROM meta WHERE slot = 1");
    if (!q.Step()) {
      return q.status().ok() ? Status::FailedPrecondition("state database has no meta row")
                             : q.status();
    }
    snap.lineage = q.ColText(0);
    snap.serial = q.ColInt(1);
  }
  {
    Stmt q(*db_, "SELECT last FROM sequence WHERE slot = 1");
    if (q.Step()) snap.sequence = q.ColInt(0);
    CAIRN_RETURN_IF_ERROR(q.status());
  }
  {
    Stmt q(*db_,
           "SELECT address, kind, id, attributes, depends_on, schema_version, tainted "
           "FROM resources");
    while (q.Step()) {
      ResourceState r;
      r.address = q.ColText(0);
      r.kind = q.ColText(1);
      r.id = q.ColText(2);
      Result<std::string> attrs_text =
          Plain(q.ColText(3), kSealedAttributes, "attributes of " + r.address);
      if (!attrs_text.ok()) return attrs_text.status();
      Result<Value> attrs = ParseStoredJson(*attrs_text, "attributes of " + r.address);
      if (!attrs.ok()) return attrs.status();
      r.attributes = std::move(*attrs);
      Result<Value> deps = ParseStoredJson(q.ColText(4), "depends_on of " + r.address);
      if (!deps.ok()) return deps.status();
      if (!deps->is_array()) {
        return Status::FailedPrecondition("state database: depends_on of " + r.address +
                                          " is not an array");
      }
      for (const Value& d : *deps) {
        if (d.is_string()) r.depends_on.push_back(d.get<std::string>());
      }
      r.schema_version = static_cast<int>(q.ColInt(5));
      r.tainted = q.ColText(6);
      snap.resources.emplace(r.address, std::move(r));
    }
    CAIRN_RETURN_IF_ERROR(q.status());
  }
  {
    Stmt q(*db_, "SELECT name, value, coalesce(sensitive, 1) FROM outputs");
    while (q.Step()) {
      std::string name = q.ColText(0);
      Result<std::string> text = Plain(q.ColText(1), kSealedOutput, "output " + name);
      if (!text.ok()) return text.status();
      Result<Value> v = ParseStoredJson(*text, "output " + name);
      if (!v.ok()) return v.status();
      if (q.ColInt(2) != 0) snap.sensitive_outputs.insert(name);
      snap.outputs.emplace(std::move(name), std::move(*v));
    }
    CAIRN_RETURN_IF_ERROR(q.status());
  }
  CAIRN_RETURN_IF_ERROR(txn.Commit());
  return snap;
}

Result<LockInfo> SqliteStateStore::TryLock(const std::string& operation) {
  Result<std::string> id = RandomUuid();
  if (!id.ok()) return id.status();
  MutexLock lock(mu_);
  CAIRN_RETURN_IF_ERROR(SetSynchronous(/*full=*/true));
  Txn txn(*db_);
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  {
    Stmt q(*db_, "SELECT id, holder, operation, created_at FROM lock WHERE slot = 1");
    if (q.Step()) {
      return LockConflict(LockInfo{q.ColText(0), q.ColText(1), q.ColText(2), q.ColInt(3)});
    }
    CAIRN_RETURN_IF_ERROR(q.status());
  }
  LockInfo info{*id, CurrentLockHolder(), operation, clock_->UnixSeconds()};
  Stmt ins(*db_,
           "INSERT INTO lock (slot, id, holder, operation, created_at) VALUES (1, ?, ?, ?, ?)");
  CAIRN_RETURN_IF_ERROR(ins.Text(1, info.id)
                            .Text(2, info.holder)
                            .Text(3, info.operation)
                            .Int(4, info.created_at)
                            .Run());
  CAIRN_RETURN_IF_ERROR(txn.Commit());
  unsynced_ = false;  // a synced commit: so is everything before it
  return info;
}

Result<LockInfo> SqliteStateStore::Lock(const std::string& operation,
                                        std::chrono::milliseconds wait) {
  return WaitForLock(*clock_, wait, [&] { return TryLock(operation); });
}

Status SqliteStateStore::Unlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  CAIRN_RETURN_IF_ERROR(SetSynchronous(/*full=*/true));
  Txn txn(*db_);
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  Stmt q(*db_, "SELECT id FROM lock WHERE slot = 1");
  if (!q.Step()) {
    CAIRN_RETURN_IF_ERROR(q.status());
    return Status::NotFound("state is not locked");
  }
  if (q.ColText(0) != lock_id) {
    return Status::Conflict("state lock " + lock_id + " is not held; the lock is now " +
                            q.ColText(0));
  }
  CAIRN_RETURN_IF_ERROR(Stmt(*db_, "DELETE FROM lock WHERE slot = 1").Run());
  CAIRN_RETURN_IF_ERROR(txn.Commit());
  unsynced_ = false;
  return Status::Ok();
}

Status SqliteStateStore::ForceUnlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  CAIRN_RETURN_IF_ERROR(SetSynchronous(/*full=*/true));
  Txn txn(*db_);
  CAIRN_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  Stmt del(*db_, "DELETE FROM lock WHERE slot = 1 AND id = ?");
  CAIRN_RETURN_IF_ERROR(del.Text(1, lock_id).Run());
  if (sqlite3_changes(db_->handle()) == 0)
    return Status::NotFound("no state lock with ID " + lock_id);
  CAIRN_RETURN_IF_ERROR(txn.Commit());
  unsynced_ = false;
  return Status::Ok();
}

Result<std::set<std::string>> SqliteStateStore::RecordedKinds() {
  MutexLock lock(mu_);
  std::set<std::string> kinds;
  Stmt q(*db_, "SELECT DISTINCT kind FROM resources");
  while (q.Step()) kinds.insert(q.ColText(0));
  CAIRN_RETURN_IF_ERROR(q.status());
  return kinds;
}

Result<std::optional<LockInfo>> SqliteStateStore::CurrentLock() {
  MutexLock lock(mu_);
  Stmt q(*db_, "SELECT id, holder, operation, created_at FROM lock WHERE slot = 1");
  if (q.Step()) {
    return std::optional<LockInfo>(LockInfo{q.ColText(0), q.ColText(1), q.ColText(2), q.ColInt(3)});
  }
  CAIRN_RETURN_IF_ERROR(q.status());
  return std::optional<LockInfo>();
}

Status SqliteStateStore::Write(const std::function<Status()>& body, Durability durability) {
  auto me = std::make_shared<PendingWrite>(&body, durability);
  write_mu_.lock();
  write_queue_.push_back(me);
  if (writing_) {
    write_mu_.unlock();
    me->wake.acquire();
    if (me->done) return me->status;
    // First in the queue when the previous batch ended: this call leads.
  } else {
    writing_ = true;
    write_mu_.unlock();
  }
  // The leader writes the queue, itself included. Callers arriving meanwhile
  // queue for the next batch, which the first of them leads.
  std::vector<std::shared_ptr<PendingWrite>> batch;
  {
    MutexLock lock(write_mu_);
    batch.swap(write_queue_);
  }
  WriteBatch(batch);
  std::shared_ptr<PendingWrite> next;
  {
    MutexLock lock(write_mu_);
    if (write_queue_.empty()) {
      writing_ = false;
    } else {
      next = write_queue_.front();  // writing_ stays set: it leads
    }
  }
  // One wake-up per waiting caller, none for the others.
  for (const auto& w : batch) {
    w->done = true;
    if (w != me) w->wake.release();
  }
  if (next) next->wake.release();
  return me->status;
}

void SqliteStateStore::WriteBatch(const std::vector<std::shared_ptr<PendingWrite>>& batch) {
  auto fail_all = [&](const Status& st) {
    for (const auto& w : batch) w->status = st;
  };
  MutexLock lock(mu_);
  const bool sync = std::any_of(batch.begin(), batch.end(), [](const auto& w) {
    return w->durability == Durability::kImmediate;
  });
  if (Status st = SetSynchronous(sync); !st.ok()) return fail_all(st);
  // synchronous=FULL is the connection's setting between batches: Lock and
  // Unlock rely on it (and set it again themselves if this fails).
  struct Restore {
    SqliteStateStore* store;
    ~Restore() {
      store->mu_.AssertHeld();  // destroyed before `lock`
      (void)store->SetSynchronous(/*full=*/true);
    }
  } restore{this};
  Txn txn(*db_);
  if (Status st = txn.Begin(/*write=*/true); !st.ok()) return fail_all(st);
  for (const auto& w : batch) {
    if (Status st = db_->Cached("SAVEPOINT cairn_write").Run(); !st.ok()) {
      return fail_all(st);
    }
    try {  // a throw here would leave writing_ set and every writer waiting
      w->status = (*w->body)();
    } catch (const std::exception& e) {
      w->status = Status::Internal(std::string("state database: ") + e.what());
    }
    if (!w->status.ok()) {
      if (Status st = db_->Cached("ROLLBACK TO cairn_write").Run(); !st.ok()) {
        return fail_all(st);
      }
    }
    if (Status st = db_->Cached("RELEASE cairn_write").Run(); !st.ok()) {
      return fail_all(st);
    }
  }
  if (Status st = txn.Commit(); !st.ok()) {
    for (const auto& w : batch) {
      if (w->status.ok()) w->status = st;
    }
    return;
  }
  // A synced commit makes every frame before it in the WAL durable too.
  unsynced_ = !sync;
}

Status SqliteStateStore::SetSynchronous(bool full) {
  if (synchronous_full_ == full) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(
      db_->Exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"));
  synchronous_full_ = full;
  return Status::Ok();
}

Status SqliteStateStore::Sync() {
  {
    MutexLock lock(mu_);
    if (!unsynced_) return Status::Ok();
  }
  // A synced commit needs a frame of its own, and SQLite writes no page for
  // an UPDATE that leaves a row's bytes as they were (nor syncs a commit
  // that wrote none): the row is changed and changed back, so that its page
  // is written, as it was, and the commit syncs the WAL.
  return Write(
      [&]() -> Status {
        mu_.AssertHeld();
        CAIRN_RETURN_IF_ERROR(
            db_->Cached("UPDATE sequence SET last = last + 1 WHERE slot = 1").Run());
        return db_->Cached("UPDATE sequence SET last = last - 1 WHERE slot = 1").Run();
      },
      Durability::kImmediate);
}

bool SqliteStateStore::SynchronousIsFullForTesting() {
  MutexLock lock(mu_);
  Result<int64_t> level = QueryInt(*db_, "PRAGMA synchronous");
  return level.ok() && *level == 2;
}

Result<int64_t> SqliteStateStore::ReserveSequences(int64_t count) {
  CAIRN_RETURN_IF_ERROR(CheckSequenceCount(count));
  int64_t last = 0;
  CAIRN_RETURN_IF_ERROR(Write(
      [&]() -> Status {
        mu_.AssertHeld();  // a Write body
        Stmt q = db_->Cached("UPDATE sequence SET last = last + ? WHERE slot = 1 RETURNING last");
        if (!q.Int(1, count).Step()) {
          CAIRN_RETURN_IF_ERROR(q.status());
          return Status::Internal("state database has no sequence row");
        }
        last = q.ColInt(0);
        return q.Run();
      },
      Durability::kDeferred));
  return last - count + 1;
}

Status SqliteStateStore::JournalBeginAll(std::span<const JournalEntry> entries) {
  CAIRN_RETURN_IF_ERROR(CheckJournalEntries(entries));
  if (entries.empty()) return Status::Ok();
  return Write(
      [&]() -> Status {
        mu_.AssertHeld();  // a Write body
        for (const JournalEntry& e : entries) {
          {
            Stmt q = db_->Cached("SELECT 1 FROM journal WHERE seq = ?");
            if (q.Int(1, e.seq).Step()) {
              return Status::AlreadyExists("journal entry " + std::to_string(e.seq) +
                                           " already exists");
            }
            CAIRN_RETURN_IF_ERROR(q.status());
          }
          Result<std::string> body = Stored(e.body, kSealedJournalBody);
          if (!body.ok()) return body.status();
          Result<std::string> context = Stored(DumpJson(e.context), kSealedJournalContext);
          if (!context.ok()) return context.status();
          Stmt ins = db_->Cached(
              "INSERT INTO journal (seq, address, action, kind, remote_id, method, "
              "path, body, idempotency_key, started_at, context) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
          ins.Int(1, e.seq).Text(2, e.address).Text(3, ActionName(e.action)).Text(4, e.kind);
          ins.Text(5, e.remote_id).Text(6, e.method).Text(7, e.path).Blob(8, *body);
          ins.Text(9, e.idempotency_key).Int(10, e.started_at).Text(11, *context);
          CAIRN_RETURN_IF_ERROR(ins.Run());
        }
        return Status::Ok();
      },
      Durability::kImmediate);
}

Result<std::vector<JournalEntry>> SqliteStateStore::PendingJournal() {
  MutexLock lock(mu_);
  Stmt q(*db_,
         "SELECT seq, address, action, kind, remote_id, method, path, body, idempotency_key, "
         "started_at, context FROM journal ORDER BY seq");
  std::vector<JournalEntry> out;
  while (q.Step()) {
    JournalEntry e;
    e.seq = q.ColInt(0);
    e.address = q.ColText(1);
    Result<Action> action = ParseJournalAction(q.ColText(2), e.seq, "state database");
    if (!action.ok()) return action.status();
    e.action = *action;
    e.kind = q.ColText(3);
    e.remote_id = q.ColText(4);
    e.method = q.ColText(5);
    e.path = q.ColText(6);
    const std::string what = "journal entry " + std::to_string(e.seq);
    Result<std::string> body = Plain(q.ColText(7), kSealedJournalBody, "body of " + what);
    if (!body.ok()) return body.status();
    e.body = std::move(*body);
    e.idempotency_key = q.ColText(8);
    e.started_at = q.ColInt(9);
    Result<std::string> ctx_text =
        Plain(q.ColText(10), kSealedJournalContext, "context of " + what);
    if (!ctx_text.ok()) return ctx_text.status();
    Result<Value> ctx = ParseStoredJson(*ctx_text, "context of " + what);
    if (!ctx.ok()) return ctx.status();
    e.context = std::move(*ctx);
    out.push_back(std::move(e));
  }
  CAIRN_RETURN_IF_ERROR(q.status());
  return out;
}

Status SqliteStateStore::ApplyCommit(const StateCommit& c) {
  for (const auto& [from, to] : c.moves) {
    Stmt src(*db_, "SELECT 1 FROM resources WHERE address = ?");
    if (!src.Text(1, from).Step()) {
      CAIRN_RETURN_IF_ERROR(src.status());
      return Status::NotFound("state mv: no resource " + from + " in the state");
    }
    Stmt dst(*db_, "SELECT 1 FROM resources WHERE address = ?");
    if (dst.Text(1, to).Step()) {
      return Status::AlreadyExists("state mv: " + to + " already exists in the state");
    }
    CAIRN_RETURN_IF_ERROR(dst.status());
    Stmt mv(*db_, "UPDATE resources SET address = ? WHERE address = ?");
    CAIRN_RETURN_IF_ERROR(mv.Text(1, to).Text(2, from).Run());
  }
  for (const ResourceState& r : c.put) {
    Stmt put = db_->Cached(
        "INSERT OR REPLACE INTO resources (address, kind, id, attributes, "
        "depends_on, schema_version, tainted) VALUES (?, ?, ?, ?, ?, ?, ?)");
    Result<std::string> attrs = Stored(DumpJson(r.attributes), kSealedAttributes);
    if (!attrs.ok()) return attrs.status();
    put.Text(1, r.address).Text(2, r.kind).Text(3, r.id).Text(4, *attrs);
    put.Text(5, DumpJson(Value(r.depends_on))).Int(6, r.schema_version).Text(7, r.tainted);
    CAIRN_RETURN_IF_ERROR(put.Run());
  }
  for (const std::string& a : c.remove) {
    CAIRN_RETURN_IF_ERROR(Stmt(*db_, "DELETE FROM resources WHERE address = ?").Text(1, a).Run());
  }
  if (c.journal_done) {
    Stmt del = db_->Cached("DELETE FROM journal WHERE seq = ?");
    CAIRN_RETURN_IF_ERROR(del.Int(1, *c.journal_done).Run());
    if (sqlite3_changes(db_->handle()) == 0) {
      return Status::NotFound("journal entry " + std::to_string(*c.journal_done) +
                              " is not pending");
    }
  }
  if (c.outputs) {
    CAIRN_RETURN_IF_ERROR(db_->Exec("DELETE FROM outputs"));
    for (const auto& [name, v] : *c.outputs) {
      Result<std::string> value = Stored(DumpJson(v), kSealedOutput);
      if (!value.ok()) return value.status();
      Stmt ins(*db_, "INSERT INTO outputs (name, value, sensitive) VALUES (?, ?, ?)");
      CAIRN_RETURN_IF_ERROR(
          ins.Text(1, name).Text(2, *value).Int(3, c.sensitive_outputs.count(name)).Run());
    }
  }
  if (c.restore) {
    Stmt meta(*db_, "UPDATE meta SET lineage = ?, serial = max(serial + 1, ?) WHERE slot = 1");
    CAIRN_RETURN_IF_ERROR(meta.Text(1, c.restore->lineage).Int(2, c.restore->min_serial).Run());
    Stmt seq(*db_, "UPDATE sequence SET last = max(last, ?) WHERE slot = 1");
    return seq.Int(1, c.restore->min_sequence).Run();
  }
  return db_->Cached("UPDATE meta SET serial = serial + 1 WHERE slot = 1").Run();
}

Result<int64_t> SqliteStateStore::Commit(const StateCommit& commit) {
  CAIRN_RETURN_IF_ERROR(CheckCommit(commit));
  int64_t serial = 0;
  CAIRN_RETURN_IF_ERROR(Write(
      [&]() -> Status {
        mu_.AssertHeld();  // a Write body
        CAIRN_RETURN_IF_ERROR(ApplyCommit(commit));
        Stmt q = db_->Cached("SELECT serial FROM meta WHERE slot = 1");
        if (!q.Step()) {
          CAIRN_RETURN_IF_ERROR(q.status());
          return Status::Internal("state database has no meta row");
        }
        serial = q.ColInt(0);
        return Status::Ok();
      },
      commit.durability));
  return serial;
}

Result<RekeyResult> SqliteStateStore::Rekey() {
  RekeyResult result;
  bool now_sealed = false;
  CAIRN_RETURN_IF_ERROR(Write(
      [&]() -> Status {
        mu_.AssertHeld();  // a Write body
        {
          Stmt q(*db_, "SELECT key_id FROM encryption WHERE slot = 1");
          if (!q.Step()) {
            CAIRN_RETURN_IF_ERROR(q.status());
            return Status::FailedPrecondition("state database has no encryption row");
          }
          result.from_key_id = q.ColText(0);
        }
        const bool seal = cipher_ != nullptr && cipher_->seals();
        result.to_key_id = seal ? cipher_->key_id() : "";
        // Every record is read first (all of them must open), then rewritten.
        auto rewrite = [&](const char* select, const char* update, std::string_view kind,
                           const std::string& what_prefix) -> Status {
          mu_.AssertHeld();                                       // called from the Write body only
          std::vector<std::pair<std::string, std::string>> rows;  // key, plaintext
          {
            Stmt q(*db_, select);
            while (q.Step()) {
              std::string key = q.ColText(0);
              Result<std::string> plain = OpenStored(cipher_.get(), sealed_, /*accept_either=*/true,
                                                     q.ColText(1), kind, what_prefix + key);
              if (!plain.ok()) return plain.status();
              rows.emplace_back(std::move(key), std::move(*plain));
            }
            CAIRN_RETURN_IF_ERROR(q.status());
          }
          for (auto& [key, plain] : rows) {
            Result<std::string> stored =
                seal ? cipher_->Seal(plain, kind) : Result<std::string>(std::move(plain));
            if (!stored.ok()) return stored.status();
            Stmt u(*db_, update);
            CAIRN_RETURN_IF_ERROR(u.Blob(1, *stored).Text(2, key).Run());
            ++result.records;
          }
          return Status::Ok();
        };
        CAIRN_RETURN_IF_ERROR(rewrite("SELECT address, attributes FROM resources",
                                      "UPDATE resources SET attributes = CAST(? AS TEXT) "
                                      "WHERE address = ?",
                                      kSealedAttributes, "attributes of "));
        CAIRN_RETURN_IF_ERROR(rewrite("SELECT name, value FROM outputs",
                                      "UPDATE outputs SET value = CAST(? AS TEXT) WHERE name = ?",
                                      kSealedOutput, "output "));
        CAIRN_RETURN_IF_ERROR(rewrite("SELECT CAST(seq AS TEXT), body FROM journal",
                                      "UPDATE journal SET body = ? WHERE seq = CAST(? AS INTEGER)",
                                      kSealedJournalBody, "body of journal entry "));
        CAIRN_RETURN_IF_ERROR(
            rewrite("SELECT CAST(seq AS TEXT), context FROM journal",
                    "UPDATE journal SET context = CAST(? AS TEXT) WHERE seq = CAST(? AS INTEGER)",
                    kSealedJournalContext, "context of journal entry "));
        Stmt mark(*db_, "UPDATE encryption SET key_id = ? WHERE slot = 1");
        CAIRN_RETURN_IF_ERROR(mark.Text(1, result.to_key_id).Run());
        now_sealed = seal;
        return Status::Ok();
      },
      Durability::kImmediate));
  MutexLock lock(mu_);
  sealed_ = now_sealed;
  // The old records' pages out of the WAL into the file, and the WAL emptied
  // (best effort: a reader may hold it; closing the last connection does it).
  (void)db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return result;
}

}  // namespace cairn
