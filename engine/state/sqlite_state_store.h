// SqliteStateStore: the default StateStore, one SQLite file per stack,
// `<stack>/.cairn/state.db` (the directory is created 0700, the file 0600;
// SQLite gives its -wal and -shm files the same mode).
//
// Durability: WAL journal with synchronous=FULL, so a method that returned OK
// survives a crash of the process or the machine, except the writes asked for
// with Durability::kDeferred (below), which survive the process being killed
// and are synced by the next immediate write. Every method is one
// transaction (BEGIN IMMEDIATE for writes), so a process killed at any point
// leaves either all of a Commit or none of it.
//
// Concurrency: one connection per store, guarded by a mutex (thread-safe).
// Group commit: ReserveSequences, JournalBeginAll and Commit calls made at the same
// time by several threads (a parallel apply) share one write transaction,
// hence one fsync; each runs inside its own SAVEPOINT, so one that fails
// leaves the others' writes intact, and each returns only once the COMMIT of
// its batch is committed (and fails if that COMMIT fails). The first caller
// writes the batch (the leader); the others sleep on a semaphore of their
// own, woken once when their batch is done or, for the first of the next
// batch, when it is its turn to lead: no caller is woken for nothing. A batch is synced
// (synchronous=FULL) if any of its writes asks for Durability::kImmediate;
// one of only kDeferred writes (ReserveSequences, an apply's create and
// update results) commits with synchronous=NORMAL: written to the WAL, which
// survives the process being killed, and synced by the next FULL commit (or
// Sync()), which covers everything before it in the WAL. Every other
// transaction (Lock, Unlock, ...) runs with synchronous=FULL.
// Across processes SQLite's file locks serialise writers (busy_timeout 10 s);
// the Cairn lock is a row taken inside a write transaction, so of two
// processes racing Lock() exactly one wins.
//
// The connection, its cached statements, transactions, the migrations and
// the mapping of SQLite's errors are base/sqlite.h's (shared with the server's
// store).
//
// No credential is stored: attributes are what the API returned, journal
// bodies are request bodies, and the API token travels only in a header.
// They may hold sensitive values of the manifests, though: with an
// `encryption` setting (SqliteStateOptions::encryption) attributes, output
// values, journal bodies and contexts are sealed by engine/state/state_cipher.h,
// every one of them, or none (the `encryption` row says which and under what
// key); `Rekey()` moves a state from one to the other in one transaction.
//
// ON-DISK FORMAT (format version 5, in PRAGMA user_version; PRAGMA
// application_id = 0x4341524E "CARN"):
//   meta      (slot INTEGER PRIMARY KEY CHECK (slot = 1),
//              lineage TEXT NOT NULL,          -- random UUID fixed at creation
//              serial INTEGER NOT NULL,        -- +1 per Commit, starts at 0
//              format_version INTEGER NOT NULL)  -- mirrors user_version
//   resources (address TEXT PRIMARY KEY,       -- canonical ResourceAddress
//              kind TEXT NOT NULL, id TEXT NOT NULL,
//              attributes TEXT NOT NULL,       -- JSON object
//              depends_on TEXT NOT NULL,       -- JSON array of addresses
//              schema_version INTEGER NOT NULL,
//              tainted TEXT NOT NULL DEFAULT '')  -- why it must be replaced; '' = healthy  [v3]
//   outputs   (name TEXT PRIMARY KEY, value TEXT NOT NULL,  -- JSON    [v2]
//              sensitive INTEGER)              -- 1, 0; NULL (before v4) = sensitive  [v4]
//   journal   (seq INTEGER PRIMARY KEY, address TEXT NOT NULL,
//              action TEXT NOT NULL, kind TEXT NOT NULL,
//              remote_id TEXT NOT NULL, method TEXT NOT NULL,
//              path TEXT NOT NULL, body BLOB NOT NULL,  -- exact bytes sent
//              idempotency_key TEXT NOT NULL, started_at INTEGER NOT NULL,
//              context TEXT NOT NULL DEFAULT '{}')      -- JSON      [v2]
//   sequence  (slot INTEGER PRIMARY KEY CHECK (slot = 1),
//              last INTEGER NOT NULL)          -- last number ReserveSequences gave
//   lock      (slot INTEGER PRIMARY KEY CHECK (slot = 1), id TEXT NOT NULL,
//              holder TEXT NOT NULL, operation TEXT NOT NULL,
//              created_at INTEGER NOT NULL)    -- unix seconds; no row = unlocked
//   encryption (slot INTEGER PRIMARY KEY CHECK (slot = 1),
//              salt BLOB NOT NULL,             -- 16 random bytes, the KDF's salt
//              key_id TEXT NOT NULL)           -- '' = records plaintext; else the id
//                                              -- of the key the last rekey (or the
//                                              -- creation) sealed them under    [v5]
//   A sealed record is text "cairn-enc1:<key id>:<base64>" (state_cipher.h) in
//   the column that would hold the plaintext: resources.attributes,
//   outputs.value, journal.body, journal.context.
// Versions: 0 = empty file; 1 = the first layout (no outputs table, no
// journal context); 2 = no taint; 3 = no output sensitivity; 4 = no
// encryption row; 5 = current.
// Open() upgrades an older file in one transaction and refuses a newer one.
#pragma once

#include <functional>
#include <memory>
#include <semaphore>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/state/state_cipher.h"
#include "engine/state/state_store.h"

namespace cairn {

class SqliteDb;

inline constexpr int kSqliteStateFormatVersion = 5;

struct SqliteStateOptions {
  Clock* clock = &SystemClock();  // not owned: times lock waits, stamps locks
  StateEncryptionSpec encryption;
  std::string stack_root;  // resolves a relative key file
  // Opened for Rekey(): a state whose records are not (or not all) under the
  // configured key opens, and reads accept sealed and plaintext records.
  bool for_rekey = false;
};

class SqliteStateStore final : public StateStore {
 public:
  // Opens (creating and upgrading as needed) the state file at `path`.
  // `clock` (not owned) times lock waits and stamps locks.
  // FailedPrecondition for a file written by a newer Cairn or not a state file.
  // With options.encryption, the key is checked against the state's before
  // anything is read: FailedPrecondition naming both key ids for a wrong
  // key, InvalidArgument naming the variable or file for a missing one;
  // FailedPrecondition, pointing at `cairn state rekey`, for an unencrypted
  // state with a key configured (an empty one is taken over), or an
  // encrypted one without.
  static Result<std::unique_ptr<SqliteStateStore>> Open(const std::string& path,
                                                        Clock* clock = &SystemClock());
  static Result<std::unique_ptr<SqliteStateStore>> Open(const std::string& path,
                                                        const SqliteStateOptions& options);
  // Opens (upgrading as needed) the state file at `path` only if a state is
  // there: NotFound, with nothing created, when the file does not exist or
  // holds nothing (an Open killed before its first transaction leaves an
  // empty file). For commands that only read.
  static Result<std::unique_ptr<SqliteStateStore>> OpenExisting(const std::string& path,
                                                                Clock* clock = &SystemClock());
  static Result<std::unique_ptr<SqliteStateStore>> OpenExisting(const std::string& path,
                                                                const SqliteStateOptions& options);
  // `<stack_root>/.cairn/state.db`.
  static std::string DefaultPath(const std::string& stack_root);

  ~SqliteStateStore() override;
  SqliteStateStore(const SqliteStateStore&) = delete;
  SqliteStateStore& operator=(const SqliteStateStore&) = delete;

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
  // An exclusive flock(2) on `<path>.watch`, which names its holder.
  Result<bool> TryWatchLease(const std::string& me, std::string* holder) override;

  // The connection's PRAGMA synchronous is FULL (as it must be between
  // batches). Tests only.
  bool SynchronousIsFullForTesting();

  const std::string& path() const { return path_; }

 private:
  SqliteStateStore(std::string path, std::unique_ptr<SqliteDb> db, Clock* clock);
  static Result<std::unique_ptr<SqliteStateStore>> OpenAndMigrate(
      const std::string& path, const SqliteStateOptions& options);
  // After the migration: reads the encryption row, derives the keys and
  // checks them against the state (see Open).
  Status SetUpEncryption(const SqliteStateOptions& options) EXCLUDES(mu_);
  // What a record's column stores for `plain`: sealed in a sealed state.
  Result<std::string> Stored(std::string plain, std::string_view record_kind) REQUIRES(mu_);
  // The plaintext of a record read from its column.
  Result<std::string> Plain(std::string stored, std::string_view record_kind, std::string_view what)
      REQUIRES(mu_);
  Result<LockInfo> TryLock(const std::string& operation) EXCLUDES(mu_);
  // Inside a write transaction.
  Status ApplyCommit(const StateCommit& commit) REQUIRES(mu_);
  // Outside a transaction. PRAGMA synchronous FULL or NORMAL, executed only
  // when the connection is not at that level already.
  Status SetSynchronous(bool full) REQUIRES(mu_);

  // One write call waiting for its batch (see "Group commit" above). Shared
  // between the caller and the leader that writes its batch, so that the
  // leader's wake-up never touches a finished caller's memory.
  struct PendingWrite {
    PendingWrite(const std::function<Status()>* b, Durability d) : body(b), durability(d) {}
    // Runs with mu_ held (it says so: mu_.AssertHeld()), in a savepoint.
    const std::function<Status()>* body;
    Durability durability;
    // Set by the leader before it releases `wake`; read by the caller after.
    Status status;
    bool done = false;
    // Released once: when the call's batch is committed (done), or when the
    // call is first in the queue as the previous batch ends (it leads next).
    std::binary_semaphore wake{0};
  };
  // Runs `body` in the next group-committed batch; its Status, or the
  // COMMIT's failure.
  Status Write(const std::function<Status()>& body, Durability durability) EXCLUDES(mu_, write_mu_);
  // Takes mu_. One transaction for all of `batch`, synced if any member asks
  // for Durability::kImmediate.
  void WriteBatch(const std::vector<std::shared_ptr<PendingWrite>>& batch) EXCLUDES(mu_);

  const std::string path_;
  Clock* const clock_;
  Mutex mu_;
  int watch_fd_ GUARDED_BY(mu_) = -1;  // TryWatchLease's file, locked while open
  // Statements every write makes run through its cache (db_->Cached): they
  // are not parsed again each time.
  std::unique_ptr<SqliteDb> db_ PT_GUARDED_BY(mu_);
  bool synchronous_full_ GUARDED_BY(mu_) = true;  // the connection's level
  bool unsynced_ GUARDED_BY(mu_) = false;         // a NORMAL commit since the last synced one
  // Null without an encryption setting. Set up once by Open, before the
  // store is shared.
  std::unique_ptr<StateCipher> cipher_;
  bool sealed_ GUARDED_BY(mu_) = false;  // the state's records are sealed
  bool for_rekey_ = false;               // SqliteStateOptions::for_rekey

  Mutex write_mu_ ACQUIRED_AFTER(mu_);  // never held while waiting for mu_ or for a batch
  std::vector<std::shared_ptr<PendingWrite>> write_queue_ GUARDED_BY(write_mu_);
  bool writing_ GUARDED_BY(write_mu_) = false;  // a leader is writing, or about to
};

}  // namespace cairn
