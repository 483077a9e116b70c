// StateStore: what Cairn recorded about a stack. Per address, the kind, the
// remote id and the attributes as last applied; the stack's lineage (a UUID
// fixed at creation, to catch a state from another stack) and serial (bumped
// by every commit, to catch stale saved plans and conflicting writers); the
// journal of mutations in flight; and the lock that keeps two applies apart.
//
// THE EXACTLY-ONCE PROTOCOL. This is its one description: engine/apply
// carries it out, the Provider's two-step mutations
// (engine/provider/provider.h) exist for it, and the docs point here. Each
// create, update or delete:
//   1. ReserveSequences(n)   a number per operation of the run (one write,
//                            Durability::kDeferred);
//   2. Provider::Prepare     the exact request (method, path, body), not sent;
//   3. JournalBeginAll       the entry: the request and its Idempotency-Key
//                            (cairn-<lineage>-<seq>-<action>-<hash of the
//                            address>), several at once, all or none; durable,
//                            with every write before it, before any of their
//                            requests leaves the machine;
//   4. send                  with the entry's key and body, retried with both
//                            unchanged (a wait for readiness may follow);
//   5. Commit({put/remove, journal_done = seq})   the result and the entry's
//                            completion in one atomic transaction; deferred
//                            where the API replays by key (see Durability):
//                            if a machine crash loses it, the entry is still
//                            pending and step 6 gets the same answer again.
//   6. Recovery: an entry still pending at the next run is an operation
//      whose outcome is unknown; it is re-sent with its original key and
//      body and the answer adopted (an API that cannot deduplicate creates
//      is first searched by name). An entry journaled but never sent is
//      harmless: sending it does what the plan asked. A definite refusal
//      clears an entry; an unknown outcome (network failure, deadline)
//      keeps it.
//
// Never stored: API tokens or any credential. Implementations are
// thread-safe; every method is one transaction.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/value.h"
#include "engine/action.h"

namespace cairn {

inline constexpr int kStateSchemaVersion = 1;

struct ResourceState {
  std::string address;  // canonical ResourceAddress text
  std::string kind;
  std::string id;                       // remote id
  Value attributes = Value::object();   // manifest names, computed ones included
  std::vector<std::string> depends_on;  // addresses, for destroy ordering
  int schema_version = kStateSchemaVersion;
  // Non-empty: the resource exists but is not usable, and why ("provisioning
  // failed: provisioning_failed"); the next plan replaces it.
  std::string tainted;
};

struct StateSnapshot {
  std::string lineage;
  int64_t serial = 0;
  // The last number ReserveSequences handed out (0: none yet). A restored
  // state carries it (StateRestore), so that a state put back from a backup
  // never hands out again a number the backup's keys used.
  int64_t sequence = 0;
  std::map<std::string, ResourceState> resources;  // by address
  std::map<std::string, Value> outputs;
  // Outputs declared sensitive, which `cairn output` masks. An output
  // recorded before this was kept is in it too, until the next apply.
  std::set<std::string> sensitive_outputs;
};

struct JournalEntry {
  int64_t seq = 0;  // from ReserveSequences(); unique per state, never reused
  std::string address;
  // kCreate, kUpdate or kDelete (IsOperation); stored as its ActionName
  // text ("create", "update", "delete").
  Action action = Action::kCreate;
  std::string kind;
  std::string remote_id;  // update/delete: the target; create: empty
  std::string method;
  std::string path;
  std::string body;  // the exact request body sent
  std::string idempotency_key;
  int64_t started_at = 0;  // unix seconds
  // What the resource should record after success (depends_on, etc.), so a
  // recovered operation can be committed without the original plan.
  Value context = Value::object();
};

struct LockInfo {
  std::string id;          // random; what force-unlock takes
  std::string holder;      // "user@host pid 1234"
  std::string operation;   // "apply", "destroy", "import", "state rm"...
  int64_t created_at = 0;  // unix seconds
};

// How soon a write must be on stable storage.
enum class Durability {
  // Durable when the call returns.
  kImmediate,
  // Atomic and visible at once, and it survives the process being killed;
  // a crash of the machine may lose it, but only together with every later
  // write: the next kImmediate write makes it, and all before it, durable.
  // For writes the journal can redo: a commit that completes a journal entry
  // (if lost, the entry is still pending and recovery re-sends it with its
  // original key, which the API answers with the original result).
  kDeferred,
};

// What a state restored from a pulled copy (cairn state push) takes from that
// copy besides its resources and outputs. Neither number ever goes down:
// saved plans are told apart by serial, idempotency keys by sequence number.
struct StateRestore {
  std::string lineage;       // becomes the state's lineage
  int64_t min_serial = 0;    // the commit's serial is max(serial + 1, min_serial)
  int64_t min_sequence = 0;  // the sequence counter becomes max(itself, min_sequence)
};

// One atomic change: resources put and removed, a finished journal entry
// cleared, outputs replaced. Bumps the serial once.
struct StateCommit {
  std::vector<ResourceState> put;
  std::vector<std::string> remove;      // addresses
  std::optional<int64_t> journal_done;  // seq of the entry this completes
  std::optional<std::map<std::string, Value>> outputs;
  std::set<std::string> sensitive_outputs;  // with `outputs`: which of them are sensitive
  // Rename: {from, to}; applied before put/remove.
  std::vector<std::pair<std::string, std::string>> moves;
  // Applied last, in place of the plain serial + 1.
  std::optional<StateRestore> restore;
  Durability durability = Durability::kImmediate;
};

// What Rekey() rewrote.
struct RekeyResult {
  int64_t records = 0;      // attribute, output, journal body and context records
  std::string from_key_id;  // "" = the state was plaintext
  std::string to_key_id;    // "" = the state is plaintext now
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // Creates the state (with a fresh lineage) on first use.
  virtual Result<StateSnapshot> Load() = 0;
  // The kinds of the resources the state records, without reading their
  // values: what a refresh will list, known before the state is read
  // (EngineSession lists them while it reads). By default from Load().
  virtual Result<std::set<std::string>> RecordedKinds() {
    auto state = Load();
    if (!state.ok()) return state.status();
    std::set<std::string> kinds;
    for (const auto& [address, resource] : state->resources) kinds.insert(resource.kind);
    return kinds;
  }

  // Takes the lock or, while `wait` lasts, keeps trying. When another holder
  // has it: Conflict, message naming the holder, the operation and since when.
  virtual Result<LockInfo> Lock(const std::string& operation, std::chrono::milliseconds wait) = 0;
  virtual Status Unlock(const std::string& lock_id) = 0;
  // Removes the lock whatever holds it, if its id matches; NotFound otherwise.
  virtual Status ForceUnlock(const std::string& lock_id) = 0;
  virtual Result<std::optional<LockInfo>> CurrentLock() = 0;

  // `count` (>= 1) fresh, consecutive sequence numbers (for journal entries
  // and idempotency keys); returns the first. Each is larger than every
  // number handed out before, by any handle. Written with
  // Durability::kDeferred: the JournalBegin that uses a number makes it
  // durable before any request carries it, so a number a machine crash takes
  // back was never sent and may safely come again.
  virtual Result<int64_t> ReserveSequences(int64_t count) = 0;
  // Records `entries` (distinct sequence numbers, none in the journal yet)
  // in one transaction: all or none, AlreadyExists for a sequence number
  // used twice. Durable when it returns, together with every write made
  // before it. An entry journaled but never sent is harmless: the next run
  // sends it with its key, completing the change the plan asked for.
  virtual Status JournalBeginAll(std::span<const JournalEntry> entries) = 0;
  Status JournalBegin(const JournalEntry& entry) { return JournalBeginAll({&entry, 1}); }
  virtual Result<std::vector<JournalEntry>> PendingJournal() = 0;

  // Applies `commit` atomically, as durably as commit.durability asks;
  // returns the new serial.
  virtual Result<int64_t> Commit(const StateCommit& commit) = 0;

  // Makes every kDeferred write made so far durable (a no-op when there is
  // none). An apply calls it about once a second, so that a deferred write
  // waits at most that long for the next synced one.
  virtual Status Sync() = 0;

  // Rewrites every encrypted-at-rest record (attributes, outputs, journal
  // bodies and contexts) under the configured key, reading it with the key,
  // the fallback or as plaintext; without a key, writes them plaintext. One
  // transaction: a crash leaves the state as it was before or after, never
  // half. Stores that keep nothing at rest (memory) return an empty result.
  virtual Result<RekeyResult> Rekey() {
    return Status::FailedPrecondition("this state backend cannot re-encrypt its state");
  }

  // `cairn watch`'s claim on this state, apart from the lock (which an
  // apply takes for its run): at most one process holds it, for as long as
  // it lives. True: this store holds it (taken now, or held already).
  // False: another process does, and `holder` (when not null) says who, as
  // that process named itself in `me` ("" when it cannot be told). A
  // process that dies loses it at once: PostgreSQL drops its session's
  // advisory lock, the kernel its file lock. Released with the store.
  virtual Result<bool> TryWatchLease(const std::string& me, std::string* holder) {
    (void)me;
    (void)holder;
    return Status::FailedPrecondition("this state backend has no watch lease");
  }
};

}  // namespace cairn
