#include "engine/state/postgres_state_store.h"

#include <pqxx/pqxx>
#include <utility>

#include "base/pg_support.h"
#include "base/redact.h"
#include "engine/state/commit_check.h"
#include "engine/state/state_lock.h"

namespace cairn {

struct PostgresStateStore::Connection {
  explicit Connection(const std::string& url) : c(url) {}
  pqxx::connection c;
};

namespace {

// Serialises schema creation between processes (CREATE TABLE IF NOT EXISTS
// races otherwise). Any constant unlikely to collide: "cairn" + "st".
constexpr int64_t kSchemaAdvisoryLock = 0x636169726e7374;

const char* const kMigrations[] = {
    // 1: the first layout.
    R"sql(
      CREATE TABLE IF NOT EXISTS cairn_state_meta (
        stack TEXT PRIMARY KEY, lineage TEXT NOT NULL, serial BIGINT NOT NULL,
        sequence BIGINT NOT NULL);
      CREATE TABLE IF NOT EXISTS cairn_state_resources (
        stack TEXT NOT NULL, address TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
        attributes TEXT NOT NULL, depends_on TEXT NOT NULL, schema_version INT NOT NULL,
        PRIMARY KEY (stack, address));
      CREATE TABLE IF NOT EXISTS cairn_state_outputs (
        stack TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (stack, name));
      CREATE TABLE IF NOT EXISTS cairn_state_journal (
        stack TEXT NOT NULL, seq BIGINT NOT NULL, address TEXT NOT NULL, action TEXT NOT NULL,
        kind TEXT NOT NULL, remote_id TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL,
        body BYTEA NOT NULL, idempotency_key TEXT NOT NULL, started_at BIGINT NOT NULL,
        context TEXT NOT NULL, PRIMARY KEY (stack, seq));
      CREATE TABLE IF NOT EXISTS cairn_state_lock (
        stack TEXT PRIMARY KEY, id TEXT NOT NULL, holder TEXT NOT NULL,
        operation TEXT NOT NULL, created_at BIGINT NOT NULL);
    )sql",
    // 2: resources whose provisioning failed.
    R"sql(
      ALTER TABLE cairn_state_resources ADD COLUMN IF NOT EXISTS tainted TEXT NOT NULL DEFAULT '';
    )sql",
    // 3: which outputs are sensitive (NULL: recorded before, taken as sensitive).
    R"sql(
      ALTER TABLE cairn_state_outputs ADD COLUMN IF NOT EXISTS sensitive BOOLEAN;
    )sql",
    // 4: encryption at rest (engine/state/state_cipher.h): the stack's salt
    // and the key its records are sealed under ('' = plaintext).
    R"sql(
      ALTER TABLE cairn_state_meta ADD COLUMN IF NOT EXISTS enc_salt TEXT;
      ALTER TABLE cairn_state_meta ADD COLUMN IF NOT EXISTS enc_key_id TEXT NOT NULL DEFAULT '';
    )sql",
};
static_assert(std::size(kMigrations) == kPostgresStateFormatVersion);

std::string DumpJson(const Value& v) {
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

Result<Value> ParseStoredJson(const std::string& text, const std::string& what) {
  auto v = ParseJson(text);
  if (!v.ok()) return Status::FailedPrecondition("state: " + what + ": " + v.status().message());
  return v;
}

template <typename F>
auto Guarded(const char* what, F&& body) -> decltype(body()) {
  return GuardPostgres("state database (PostgreSQL)", what, std::forward<F>(body));
}

// Takes the stack's meta row for the rest of the transaction.
Status LockMeta(pqxx::work& w, const std::string& stack) {
  pqxx::result r =
      w.exec_params("SELECT serial FROM cairn_state_meta WHERE stack = $1 FOR UPDATE", stack);
  if (r.empty()) return Status::FailedPrecondition("state of stack " + stack + " is missing");
  return Status::Ok();
}

// Durability::kDeferred for this transaction: its COMMIT does not wait for
// the WAL flush. PostgreSQL's WAL is ordered, so the next synchronous commit
// flushes it too.
void DeferDurability(pqxx::work& w) { w.exec("SET LOCAL synchronous_commit TO OFF"); }

LockInfo LockFromRow(const pqxx::row& row) {
  return LockInfo{row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                  row[3].as<int64_t>()};
}

}  // namespace

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::Open(const std::string& url,
                                                                     const std::string& stack,
                                                                     Clock* clock) {
  PostgresStateOptions options;
  options.clock = clock;
  return OpenStack(url, stack, options, /*create=*/true);
}

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::OpenExisting(
    const std::string& url, const std::string& stack, Clock* clock) {
  PostgresStateOptions options;
  options.clock = clock;
  return OpenStack(url, stack, options, /*create=*/false);
}

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::Open(
    const std::string& url, const std::string& stack, const PostgresStateOptions& options) {
  return OpenStack(url, stack, options, /*create=*/true);
}

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::OpenExisting(
    const std::string& url, const std::string& stack, const PostgresStateOptions& options) {
  return OpenStack(url, stack, options, /*create=*/false);
}

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::OpenStack(
    const std::string& url, const std::string& stack, const PostgresStateOptions& options,
    bool create) {
  Clock* clock = options.clock;
  RegisterUrlSecrets(url);
  if (stack.empty()) return Status::InvalidArgument("PostgreSQL state backend needs a stack name");
  return Guarded("open", [&]() -> Result<std::unique_ptr<PostgresStateStore>> {
    auto conn = std::make_unique<Connection>(url);
    if (!create) {
      // Read only: no table and no meta row is made for a stack without state.
      pqxx::read_transaction r(conn->c);
      pqxx::result tables = r.exec("SELECT to_regclass('cairn_state_meta') IS NOT NULL");
      if (!tables[0][0].as<bool>() ||
          r.exec_params("SELECT 1 FROM cairn_state_meta WHERE stack = $1", stack).empty()) {
        return Status::NotFound("no state for stack " + stack + " in the PostgreSQL database");
      }
      r.commit();
    }
    {
      pqxx::work w(conn->c);
      w.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaAdvisoryLock);
      w.exec(
          "CREATE TABLE IF NOT EXISTS cairn_state_format ("
          "slot INT PRIMARY KEY CHECK (slot = 1), version INT NOT NULL)");
      pqxx::result r = w.exec("SELECT version FROM cairn_state_format WHERE slot = 1");
      int version = r.empty() ? 0 : r[0][0].as<int>();
      if (version < 0) {
        return Status::FailedPrecondition("PostgreSQL state tables have format version " +
                                          std::to_string(version) + ": not Cairn's");
      }
      if (version > kPostgresStateFormatVersion) {
        return Status::FailedPrecondition(
            "PostgreSQL state tables have format version " + std::to_string(version) +
            ", made by a newer Cairn; this Cairn reads format versions up to " +
            std::to_string(kPostgresStateFormatVersion) + ": upgrade cairn");
      }
      for (int v = version; v < kPostgresStateFormatVersion; ++v) w.exec(kMigrations[v]);
      w.exec_params(
          "INSERT INTO cairn_state_format (slot, version) VALUES (1, $1) "
          "ON CONFLICT (slot) DO UPDATE SET version = EXCLUDED.version",
          kPostgresStateFormatVersion);
      Result<std::string> lineage = RandomUuid();
      if (!lineage.ok()) return lineage.status();
      w.exec_params(
          "INSERT INTO cairn_state_meta (stack, lineage, serial, sequence) VALUES ($1, $2, 0, 0) "
          "ON CONFLICT (stack) DO NOTHING",
          stack, *lineage);
      Result<std::string> salt = StateCipher::NewSaltText();
      if (!salt.ok()) return salt.status();
      w.exec_params(
          "UPDATE cairn_state_meta SET enc_salt = $2 WHERE stack = $1 AND enc_salt IS NULL", stack,
          *salt);
      w.commit();
    }
    std::unique_ptr<PostgresStateStore> store(
        new PostgresStateStore(std::move(conn), stack, clock));
    CAIRN_RETURN_IF_ERROR(store->SetUpEncryption(options));
    return store;
  });
}

Status PostgresStateStore::SetUpEncryption(const PostgresStateOptions& options) {
  MutexLock lock(mu_);
  for_rekey_ = options.for_rekey;
  // No record exists in the stack (a new state is sealed from the start).
  constexpr const char* kNoRecords =
      "NOT EXISTS (SELECT 1 FROM cairn_state_resources WHERE stack = $1) AND "
      "NOT EXISTS (SELECT 1 FROM cairn_state_outputs WHERE stack = $1) AND "
      "NOT EXISTS (SELECT 1 FROM cairn_state_journal WHERE stack = $1)";
  pqxx::work w(conn_->c);
  pqxx::result meta = w.exec_params(std::string("SELECT enc_salt, enc_key_id, ") + kNoRecords +
                                        " FROM cairn_state_meta WHERE stack = $1",
                                    stack_);
  if (meta.empty()) return Status::FailedPrecondition("state of stack " + stack_ + " is missing");
  const std::string salt = meta[0][0].as<std::string>();
  const std::string state_key = meta[0][1].as<std::string>();
  const bool empty = meta[0][2].as<bool>();
  if (options.encryption.configured()) {
    Result<std::unique_ptr<StateCipher>> cipher =
        StateCipher::Create(options.encryption, salt, options.stack_root);
    if (!cipher.ok()) return cipher.status();
    cipher_ = std::move(*cipher);
  }
  Result<StateKeyCheck> check = CheckStateKey(cipher_.get(), state_key, !empty, for_rekey_);
  if (!check.ok()) return check.status();
  if (check->take_over) {
    pqxx::result r = w.exec_params(
        std::string("UPDATE cairn_state_meta SET enc_key_id = $2 WHERE stack = $1 AND "
                    "enc_key_id = '' AND ") +
            kNoRecords,
        stack_, cipher_->key_id());
    if (r.affected_rows() != 1) {
      return Status::Conflict(
          "another process wrote the state while it was being opened with encryption: run the "
          "command again");
    }
  }
  w.commit();
  sealed_ = check->sealed;
  return Status::Ok();
}

Result<std::string> PostgresStateStore::Stored(std::string plain, std::string_view record_kind) {
  return SealStored(cipher_.get(), sealed_, std::move(plain), record_kind);
}

Result<std::string> PostgresStateStore::Plain(std::string stored, std::string_view record_kind,
                                              std::string_view what) {
  return OpenStored(cipher_.get(), sealed_, for_rekey_, std::move(stored), record_kind, what);
}

Result<std::vector<std::string>> PostgresStateStore::ListStacks(const std::string& url,
                                                                const std::string& prefix) {
  RegisterUrlSecrets(url);
  return Guarded("list stacks", [&]() -> Result<std::vector<std::string>> {
    pqxx::connection c(url);
    pqxx::read_transaction r(c);
    std::vector<std::string> out;
    if (!r.exec("SELECT to_regclass('cairn_state_meta') IS NOT NULL")[0][0].as<bool>()) return out;
    for (const pqxx::row& row : r.exec_params(
             "SELECT stack FROM cairn_state_meta WHERE left(stack, length($1)) = $1 ORDER BY stack",
             prefix)) {
      out.push_back(row[0].as<std::string>());
    }
    r.commit();
    return out;
  });
}

Status PostgresStateStore::DeleteStack(const std::string& url, const std::string& stack) {
  RegisterUrlSecrets(url);
  return Guarded("delete stack", [&]() -> Status {
    pqxx::connection c(url);
    {
      pqxx::read_transaction r(c);
      if (!r.exec("SELECT to_regclass('cairn_state_meta') IS NOT NULL")[0][0].as<bool>()) {
        return Status::NotFound("no state for stack " + stack + " in the PostgreSQL database");
      }
      r.commit();
    }
    pqxx::work w(c);
    if (w.exec_params("SELECT 1 FROM cairn_state_meta WHERE stack = $1 FOR UPDATE", stack)
            .empty()) {
      return Status::NotFound("no state for stack " + stack + " in the PostgreSQL database");
    }
    pqxx::result held = w.exec_params(
        "SELECT id, holder, operation, created_at FROM cairn_state_lock WHERE stack = $1", stack);
    if (!held.empty()) return LockConflict(LockFromRow(held[0]));
    for (const char* table : {"cairn_state_resources", "cairn_state_outputs", "cairn_state_journal",
                              "cairn_state_lock", "cairn_state_meta"}) {
      w.exec_params(std::string("DELETE FROM ") + table + " WHERE stack = $1", stack);
    }
    w.commit();
    return Status::Ok();
  });
}

PostgresStateStore::PostgresStateStore(std::unique_ptr<Connection> conn, std::string stack,
                                       Clock* clock)
    : stack_(std::move(stack)), clock_(clock), conn_(std::move(conn)) {}

PostgresStateStore::~PostgresStateStore() = default;

namespace {
// The watch lease's advisory lock: (this class, hashtext(stack)). "cwat".
constexpr int32_t kWatchLeaseClass = 0x63776174;
}  // namespace

Result<bool> PostgresStateStore::TryWatchLease(const std::string& me, std::string* holder) {
  MutexLock lock(mu_);
  return Guarded("watch lease", [&]() -> Result<bool> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::nontransaction n(conn_->c);
    if (watch_leased_) {
      // Held by this session still (a lost connection would have lost it).
      return n
          .exec_params(
              "SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
              "pid = pg_backend_pid() AND classid = $1::bigint::oid AND "
              "objid = (hashtext($2)::bigint & 4294967295)::oid AND objsubid = 2",
              kWatchLeaseClass, stack_)[0][0]
          .as<bool>();
    }
    n.exec_params("SELECT set_config('application_name', $1, false)",
                  ("cairn watch " + me).substr(0, 63));
    watch_leased_ = n.exec_params("SELECT pg_try_advisory_lock($1, hashtext($2))", kWatchLeaseClass,
                                  stack_)[0][0]
                        .as<bool>();
    if (!watch_leased_ && holder != nullptr) {
      pqxx::result r = n.exec_params(
          "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
          "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND "
          "l.objid = (hashtext($2)::bigint & 4294967295)::oid AND l.objsubid = 2",
          kWatchLeaseClass, stack_);
      std::string name = r.empty() ? "" : r[0][0].as<std::string>("");
      if (name.rfind("cairn watch ", 0) == 0) name = name.substr(12);
      *holder = name;
    }
    return watch_leased_;
  });
}

Result<StateSnapshot> PostgresStateStore::Load() {
  MutexLock lock(mu_);
  return Guarded("load", [&]() -> Result<StateSnapshot> {
    mu_.AssertHeld();  // Guarded runs it at once
    // REPEATABLE READ: one snapshot for the three reads.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> w(conn_->c);
    StateSnapshot snap;
    pqxx::result meta = w.exec_params(
        "SELECT lineage, serial, sequence FROM cairn_state_meta WHERE stack = $1", stack_);
    if (meta.empty()) return Status::FailedPrecondition("state of stack " + stack_ + " is missing");
    snap.lineage = meta[0][0].as<std::string>();
    snap.serial = meta[0][1].as<int64_t>();
    snap.sequence = meta[0][2].as<int64_t>();
    for (const pqxx::row& row :
         w.exec_params("SELECT address, kind, id, attributes, depends_on, schema_version, tainted "
                       "FROM cairn_state_resources WHERE stack = $1",
                       stack_)) {
      ResourceState r;
      r.address = row[0].as<std::string>();
      r.kind = row[1].as<std::string>();
      r.id = row[2].as<std::string>();
      Result<std::string> attrs_text =
          Plain(row[3].as<std::string>(), kSealedAttributes, "attributes of " + r.address);
      if (!attrs_text.ok()) return attrs_text.status();
      Result<Value> attrs = ParseStoredJson(*attrs_text, "attributes of " + r.address);
      if (!attrs.ok()) return attrs.status();
      r.attributes = std::move(*attrs);
      Result<Value> deps = ParseStoredJson(row[4].as<std::string>(), "depends_on of " + r.address);
      if (!deps.ok()) return deps.status();
      if (deps->is_array()) {
        for (const Value& d : *deps) {
          if (d.is_string()) r.depends_on.push_back(d.get<std::string>());
        }
      }
      r.schema_version = row[5].as<int>();
      r.tainted = row[6].as<std::string>();
      snap.resources.emplace(r.address, std::move(r));
    }
    for (const pqxx::row& row :
         w.exec_params("SELECT name, value, coalesce(sensitive, true) FROM cairn_state_outputs "
                       "WHERE stack = $1",
                       stack_)) {
      std::string name = row[0].as<std::string>();
      Result<std::string> text = Plain(row[1].as<std::string>(), kSealedOutput, "output " + name);
      if (!text.ok()) return text.status();
      Result<Value> v = ParseStoredJson(*text, "output " + name);
      if (!v.ok()) return v.status();
      if (row[2].as<bool>()) snap.sensitive_outputs.insert(name);
      snap.outputs.emplace(std::move(name), std::move(*v));
    }
    w.commit();
    return snap;
  });
}

Result<LockInfo> PostgresStateStore::TryLock(const std::string& operation) {
  Result<std::string> id = RandomUuid();
  if (!id.ok()) return id.status();
  MutexLock lock(mu_);
  return Guarded("lock", [&]() -> Result<LockInfo> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    CAIRN_RETURN_IF_ERROR(LockMeta(w, stack_));
    pqxx::result held = w.exec_params(
        "SELECT id, holder, operation, created_at FROM cairn_state_lock WHERE stack = $1", stack_);
    if (!held.empty()) return LockConflict(LockFromRow(held[0]));
    LockInfo info{*id, CurrentLockHolder(), operation, clock_->UnixSeconds()};
    w.exec_params(
        "INSERT INTO cairn_state_lock (stack, id, holder, operation, created_at) "
        "VALUES ($1, $2, $3, $4, $5)",
        stack_, info.id, info.holder, info.operation, info.created_at);
    w.commit();
    return info;
  });
}

Result<LockInfo> PostgresStateStore::Lock(const std::string& operation,
                                          std::chrono::milliseconds wait) {
  return WaitForLock(*clock_, wait, [&] { return TryLock(operation); });
}

Status PostgresStateStore::Unlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  return Guarded("unlock", [&]() -> Status {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    CAIRN_RETURN_IF_ERROR(LockMeta(w, stack_));
    pqxx::result held = w.exec_params("SELECT id FROM cairn_state_lock WHERE stack = $1", stack_);
    if (held.empty()) return Status::NotFound("state is not locked");
    const std::string current = held[0][0].as<std::string>();
    if (current != lock_id) {
      return Status::Conflict("state lock " + lock_id + " is not held; the lock is now " + current);
    }
    w.exec_params("DELETE FROM cairn_state_lock WHERE stack = $1", stack_);
    w.commit();
    return Status::Ok();
  });
}

Status PostgresStateStore::ForceUnlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  return Guarded("force-unlock", [&]() -> Status {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    pqxx::result r =
        w.exec_params("DELETE FROM cairn_state_lock WHERE stack = $1 AND id = $2", stack_, lock_id);
    if (r.affected_rows() == 0) return Status::NotFound("no state lock with ID " + lock_id);
    w.commit();
    return Status::Ok();
  });
}

Result<std::set<std::string>> PostgresStateStore::RecordedKinds() {
  MutexLock lock(mu_);
  return Guarded("read the kinds", [&]() -> Result<std::set<std::string>> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    pqxx::result rows =
        w.exec_params("SELECT DISTINCT kind FROM cairn_state_resources WHERE stack = $1", stack_);
    w.commit();
    std::set<std::string> kinds;
    for (const pqxx::row& row : rows) kinds.insert(row[0].as<std::string>());
    return kinds;
  });
}

Result<std::optional<LockInfo>> PostgresStateStore::CurrentLock() {
  MutexLock lock(mu_);
  return Guarded("read lock", [&]() -> Result<std::optional<LockInfo>> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    pqxx::result held = w.exec_params(
        "SELECT id, holder, operation, created_at FROM cairn_state_lock WHERE stack = $1", stack_);
    w.commit();
    if (held.empty()) return std::optional<LockInfo>();
    return std::optional<LockInfo>(LockFromRow(held[0]));
  });
}

Result<int64_t> PostgresStateStore::ReserveSequences(int64_t count) {
  CAIRN_RETURN_IF_ERROR(CheckSequenceCount(count));
  MutexLock lock(mu_);
  return Guarded("reserve sequence numbers", [&]() -> Result<int64_t> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    DeferDurability(w);
    pqxx::result r = w.exec_params(
        "UPDATE cairn_state_meta SET sequence = sequence + $2 WHERE stack = $1 "
        "RETURNING sequence",
        stack_, count);
    if (r.empty()) return Status::FailedPrecondition("state of stack " + stack_ + " is missing");
    int64_t last = r[0][0].as<int64_t>();
    w.commit();
    return last - count + 1;
  });
}

Status PostgresStateStore::JournalBeginAll(std::span<const JournalEntry> entries) {
  CAIRN_RETURN_IF_ERROR(CheckJournalEntries(entries));
  if (entries.empty()) return Status::Ok();
  MutexLock lock(mu_);
  return Guarded("journal", [&]() -> Status {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    CAIRN_RETURN_IF_ERROR(LockMeta(w, stack_));
    for (const JournalEntry& e : entries) {
      if (!w.exec_params("SELECT 1 FROM cairn_state_journal WHERE stack = $1 AND seq = $2", stack_,
                         e.seq)
               .empty()) {
        return Status::AlreadyExists("journal entry " + std::to_string(e.seq) + " already exists");
      }
      Result<std::string> body = Stored(e.body, kSealedJournalBody);
      if (!body.ok()) return body.status();
      Result<std::string> context = Stored(DumpJson(e.context), kSealedJournalContext);
      if (!context.ok()) return context.status();
      w.exec_params(
          "INSERT INTO cairn_state_journal (stack, seq, address, action, kind, remote_id, "
          "method, path, body, idempotency_key, started_at, context) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
          stack_, e.seq, e.address, ActionName(e.action), e.kind, e.remote_id, e.method, e.path,
          pqxx::binarystring(*body), e.idempotency_key, e.started_at, *context);
    }
    w.commit();
    return Status::Ok();
  });
}

Result<std::vector<JournalEntry>> PostgresStateStore::PendingJournal() {
  MutexLock lock(mu_);
  return Guarded("read journal", [&]() -> Result<std::vector<JournalEntry>> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    pqxx::result rows = w.exec_params(
        "SELECT seq, address, action, kind, remote_id, method, path, body, idempotency_key, "
        "started_at, context FROM cairn_state_journal WHERE stack = $1 ORDER BY seq",
        stack_);
    w.commit();
    std::vector<JournalEntry> out;
    for (const pqxx::row& row : rows) {
      JournalEntry e;
      e.seq = row[0].as<int64_t>();
      e.address = row[1].as<std::string>();
      Result<Action> action = ParseJournalAction(row[2].as<std::string>(), e.seq, "state");
      if (!action.ok()) return action.status();
      e.action = *action;
      e.kind = row[3].as<std::string>();
      e.remote_id = row[4].as<std::string>();
      e.method = row[5].as<std::string>();
      e.path = row[6].as<std::string>();
      const std::string what = "journal entry " + std::to_string(e.seq);
      Result<std::string> body =
          Plain(pqxx::binarystring(row[7]).str(), kSealedJournalBody, "body of " + what);
      if (!body.ok()) return body.status();
      e.body = std::move(*body);
      e.idempotency_key = row[8].as<std::string>();
      e.started_at = row[9].as<int64_t>();
      Result<std::string> ctx_text =
          Plain(row[10].as<std::string>(), kSealedJournalContext, "context of " + what);
      if (!ctx_text.ok()) return ctx_text.status();
      Result<Value> ctx = ParseStoredJson(*ctx_text, "context of " + what);
      if (!ctx.ok()) return ctx.status();
      e.context = std::move(*ctx);
      out.push_back(std::move(e));
    }
    return out;
  });
}

Status PostgresStateStore::Sync() {
  MutexLock lock(mu_);
  return Guarded("sync", [&]() -> Status {
    mu_.AssertHeld();  // Guarded runs it at once
    // A transaction with an id commits with a WAL record; committed
    // synchronously, it flushes the WAL up to there, the asynchronous
    // commits before it included.
    pqxx::work w(conn_->c);
    w.exec("SELECT txid_current()");
    w.commit();
    return Status::Ok();
  });
}

Result<int64_t> PostgresStateStore::Commit(const StateCommit& c) {
  CAIRN_RETURN_IF_ERROR(CheckCommit(c));
  MutexLock lock(mu_);
  return Guarded("commit", [&]() -> Result<int64_t> {
    mu_.AssertHeld();  // Guarded runs it at once
    pqxx::work w(conn_->c);
    if (c.durability == Durability::kDeferred) DeferDurability(w);
    CAIRN_RETURN_IF_ERROR(LockMeta(w, stack_));
    for (const auto& [from, to] : c.moves) {
      if (!w.exec_params("SELECT 1 FROM cairn_state_resources WHERE stack = $1 AND address = $2",
                         stack_, to)
               .empty()) {
        return Status::AlreadyExists("state mv: " + to + " already exists in the state");
      }
      pqxx::result r = w.exec_params(
          "UPDATE cairn_state_resources SET address = $3 WHERE stack = $1 AND address = $2", stack_,
          from, to);
      if (r.affected_rows() == 0) {
        return Status::NotFound("state mv: no resource " + from + " in the state");
      }
    }
    for (const ResourceState& r : c.put) {
      Result<std::string> attrs = Stored(DumpJson(r.attributes), kSealedAttributes);
      if (!attrs.ok()) return attrs.status();
      w.exec_params(
          "INSERT INTO cairn_state_resources "
          "(stack, address, kind, id, attributes, depends_on, schema_version, tainted) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (stack, address) DO UPDATE SET "
          "kind = EXCLUDED.kind, id = EXCLUDED.id, attributes = EXCLUDED.attributes, "
          "depends_on = EXCLUDED.depends_on, schema_version = EXCLUDED.schema_version, "
          "tainted = EXCLUDED.tainted",
          stack_, r.address, r.kind, r.id, *attrs, DumpJson(Value(r.depends_on)), r.schema_version,
          r.tainted);
    }
    for (const std::string& a : c.remove) {
      w.exec_params("DELETE FROM cairn_state_resources WHERE stack = $1 AND address = $2", stack_,
                    a);
    }
    if (c.journal_done) {
      pqxx::result r = w.exec_params(
          "DELETE FROM cairn_state_journal WHERE stack = $1 AND seq = $2", stack_, *c.journal_done);
      if (r.affected_rows() == 0) {
        return Status::NotFound("journal entry " + std::to_string(*c.journal_done) +
                                " is not pending");
      }
    }
    if (c.outputs) {
      w.exec_params("DELETE FROM cairn_state_outputs WHERE stack = $1", stack_);
      for (const auto& [name, v] : *c.outputs) {
        Result<std::string> value = Stored(DumpJson(v), kSealedOutput);
        if (!value.ok()) return value.status();
        w.exec_params(
            "INSERT INTO cairn_state_outputs (stack, name, value, sensitive) VALUES ($1, $2, $3, "
            "$4)",
            stack_, name, *value, c.sensitive_outputs.count(name) > 0);
      }
    }
    pqxx::result serial =
        c.restore ? w.exec_params(
                        "UPDATE cairn_state_meta SET lineage = $2, serial = GREATEST(serial + 1, "
                        "$3), sequence = GREATEST(sequence, $4) WHERE stack = $1 RETURNING serial",
                        stack_, c.restore->lineage, c.restore->min_serial, c.restore->min_sequence)
                  : w.exec_params(
                        "UPDATE cairn_state_meta SET serial = serial + 1 WHERE stack = $1 "
                        "RETURNING serial",
                        stack_);
    int64_t s = serial[0][0].as<int64_t>();
    w.commit();
    return s;
  });
}

Result<RekeyResult> PostgresStateStore::Rekey() {
  MutexLock lock(mu_);
  Result<RekeyResult> result = Guarded("rekey", [&]() -> Result<RekeyResult> {
    mu_.AssertHeld();  // Guarded runs it at once
    RekeyResult out;
    pqxx::work w(conn_->c);
    CAIRN_RETURN_IF_ERROR(LockMeta(w, stack_));
    out.from_key_id =
        w.exec_params("SELECT enc_key_id FROM cairn_state_meta WHERE stack = $1", stack_)[0][0]
            .as<std::string>();
    const bool seal = cipher_ != nullptr && cipher_->seals();
    out.to_key_id = seal ? cipher_->key_id() : "";
    // Every record of a column read first (all must open), then rewritten.
    auto rewrite = [&](const std::string& select, const std::string& update, std::string_view kind,
                       const std::string& what_prefix, bool binary) -> Status {
      mu_.AssertHeld();                                       // called from the body only
      std::vector<std::pair<std::string, std::string>> rows;  // key, plaintext
      for (const pqxx::row& row : w.exec_params(select, stack_)) {
        std::string key = row[0].as<std::string>();
        std::string stored = binary ? pqxx::binarystring(row[1]).str() : row[1].as<std::string>();
        Result<std::string> plain = OpenStored(cipher_.get(), sealed_, /*accept_either=*/true,
                                               std::move(stored), kind, what_prefix + key);
        if (!plain.ok()) return plain.status();
        rows.emplace_back(std::move(key), std::move(*plain));
      }
      for (auto& [key, plain] : rows) {
        Result<std::string> stored =
            seal ? cipher_->Seal(plain, kind) : Result<std::string>(std::move(plain));
        if (!stored.ok()) return stored.status();
        if (binary) {
          w.exec_params(update, stack_, key, pqxx::binarystring(*stored));
        } else {
          w.exec_params(update, stack_, key, *stored);
        }
        ++out.records;
      }
      return Status::Ok();
    };
    CAIRN_RETURN_IF_ERROR(rewrite(
        "SELECT address, attributes FROM cairn_state_resources WHERE stack = $1",
        "UPDATE cairn_state_resources SET attributes = $3 WHERE stack = $1 AND address = $2",
        kSealedAttributes, "attributes of ", false));
    CAIRN_RETURN_IF_ERROR(
        rewrite("SELECT name, value FROM cairn_state_outputs WHERE stack = $1",
                "UPDATE cairn_state_outputs SET value = $3 WHERE stack = $1 AND name = $2",
                kSealedOutput, "output ", false));
    CAIRN_RETURN_IF_ERROR(
        rewrite("SELECT seq::text, body FROM cairn_state_journal WHERE stack = $1",
                "UPDATE cairn_state_journal SET body = $3 WHERE stack = $1 AND seq = $2::bigint",
                kSealedJournalBody, "body of journal entry ", true));
    CAIRN_RETURN_IF_ERROR(
        rewrite("SELECT seq::text, context FROM cairn_state_journal WHERE stack = $1",
                "UPDATE cairn_state_journal SET context = $3 WHERE stack = $1 AND seq = $2::bigint",
                kSealedJournalContext, "context of journal entry ", false));
    w.exec_params("UPDATE cairn_state_meta SET enc_key_id = $2 WHERE stack = $1", stack_,
                  out.to_key_id);
    w.commit();
    return out;
  });
  if (result.ok()) sealed_ = !result->to_key_id.empty();
  return result;
}

}  // namespace cairn
