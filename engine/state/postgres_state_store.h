// PostgresStateStore: the StateStore contract on PostgreSQL, for teams that
// share a stack's state. Many stacks share one database: every table has a
// `stack` key column and each store sees only its own stack's rows.
//
// Tables (created on first use, format version in cairn_state_format):
//   cairn_state_format    (slot 1, version)        -- refuses a newer version
//   cairn_state_meta      (stack PK, lineage, serial, sequence,
//                          enc_salt TEXT,           -- the KDF's salt (32 hex digits)
//                          enc_key_id TEXT, '' = records plaintext)  [v4]
//   cairn_state_resources (stack, address PK, kind, id, attributes TEXT JSON,
//                          depends_on TEXT JSON, schema_version,
//                          tainted TEXT, '' = healthy)             [v2]
//   cairn_state_outputs   (stack, name PK, value TEXT JSON,
//                          sensitive BOOLEAN, NULL = sensitive)     [v3]
//   cairn_state_journal   (stack, seq PK, address, action, kind, remote_id,
//                          method, path, body BYTEA, idempotency_key,
//                          started_at, context TEXT JSON)
//   cairn_state_lock      (stack PK, id, holder, operation, created_at)
// Every method is one transaction. Writers first take the stack's meta row
// with SELECT ... FOR UPDATE, so writers of one stack are serialised: of two
// processes racing Lock(), exactly one inserts the lock row. The lock row
// carries the same message as the SQLite store's.
//
// The connection URL may hold a password: Open() registers it (and the
// password alone) with cairn::RegisterSecret and it never appears in a
// message. pqxx is confined to the .cc; no exception leaves this class.
// No credential is stored (see sqlite_state_store.h); with an `encryption`
// setting, attributes, output values, journal bodies and contexts are sealed
// exactly as there (state_cipher.h, CheckStateKey), per stack.
//
// Thread-safe: one connection, guarded by a mutex.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/state/state_cipher.h"
#include "engine/state/state_store.h"

namespace cairn {

inline constexpr int kPostgresStateFormatVersion = 4;

struct PostgresStateOptions {
  Clock* clock = &SystemClock();
  StateEncryptionSpec encryption;
  std::string stack_root;  // resolves a relative key file
  bool for_rekey = false;  // as SqliteStateOptions::for_rekey
};

class PostgresStateStore final : public StateStore {
 public:
  // Connects to `url` (libpq URL or keyword string), creates the tables if
  // needed and the stack's meta row (with a fresh lineage) on first use.
  // Unavailable when the server cannot be reached; FailedPrecondition when the
  // tables were made by a newer Cairn.
  static Result<std::unique_ptr<PostgresStateStore>> Open(const std::string& url,
                                                          const std::string& stack,
                                                          Clock* clock = &SystemClock());
  static Result<std::unique_ptr<PostgresStateStore>> Open(const std::string& url,
                                                          const std::string& stack,
                                                          const PostgresStateOptions& options);
  // Like Open, but only if the stack has a state: NotFound, with nothing
  // created (no table, no meta row), when it has none. For commands that
  // only read.
  static Result<std::unique_ptr<PostgresStateStore>> OpenExisting(const std::string& url,
                                                                  const std::string& stack,
                                                                  Clock* clock = &SystemClock());
  static Result<std::unique_ptr<PostgresStateStore>> OpenExisting(
      const std::string& url, const std::string& stack, const PostgresStateOptions& options);
  // The stacks with a state whose key starts with `prefix`, sorted; none
  // (and nothing created) when the tables do not exist yet.
  static Result<std::vector<std::string>> ListStacks(const std::string& url,
                                                     const std::string& prefix);
  // Removes every row of `stack` (its state, outputs, journal) in one
  // transaction: NotFound when it has no state, Conflict (naming the
  // holder) while its lock is held.
  static Status DeleteStack(const std::string& url, const std::string& stack);
  ~PostgresStateStore() override;
  PostgresStateStore(const PostgresStateStore&) = delete;
  PostgresStateStore& operator=(const PostgresStateStore&) = delete;

  Result<StateSnapshot> Load() override;
  Result<LockInfo> Lock(const std::string& operation, std::chrono::milliseconds wait) override;
  Status Unlock(const std::string& lock_id) override;
  Status ForceUnlock(const std::string& lock_id) override;
  Result<std::optional<LockInfo>> CurrentLock() override;
  Result<std::set<std::string>> RecordedKinds() override;
  Result<int64_t> ReserveSequences(int64_t count) override;
  Status JournalBeginAll(std::span<const JournalEntry> entries) override;
  Result<std::vector<JournalEntry>> PendingJournal() override;
  Result<int64_t> Commit(const StateCommit& commit) override;
  Status Sync() override;
  Result<RekeyResult> Rekey() override;
  // A session advisory lock on the store's connection, whose
  // application_name names the holder.
  Result<bool> TryWatchLease(const std::string& me, std::string* holder) override;

  const std::string& stack() const { return stack_; }

 private:
  struct Connection;  // the pqxx::connection, kept out of this header
  PostgresStateStore(std::unique_ptr<Connection> conn, std::string stack, Clock* clock);
  static Result<std::unique_ptr<PostgresStateStore>> OpenStack(const std::string& url,
                                                               const std::string& stack,
                                                               const PostgresStateOptions& options,
                                                               bool create);
  Result<LockInfo> TryLock(const std::string& operation);
  // After the tables: derives the keys with the stack's salt and checks them
  // against the stack's key id (CheckStateKey).
  Status SetUpEncryption(const PostgresStateOptions& options) EXCLUDES(mu_);
  // A record's column value for `plain`, and back (as in the SQLite store).
  Result<std::string> Stored(std::string plain, std::string_view record_kind) REQUIRES(mu_);
  Result<std::string> Plain(std::string stored, std::string_view record_kind, std::string_view what)
      REQUIRES(mu_);

  const std::string stack_;
  Clock* const clock_;
  Mutex mu_;
  std::unique_ptr<Connection> conn_ PT_GUARDED_BY(mu_);
  // Null without an encryption setting; set up by Open before sharing.
  std::unique_ptr<StateCipher> cipher_;
  bool sealed_ GUARDED_BY(mu_) = false;
  bool watch_leased_ GUARDED_BY(mu_) = false;
  bool for_rekey_ = false;
};

}  // namespace cairn
