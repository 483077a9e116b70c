// MemoryStateStore: the StateStore contract held in memory, for unit tests of
// plan and apply. Same semantics as the SQLite and PostgreSQL stores (the
// contract tests in tests/engine/state run against all three), minus
// durability: nothing survives the object.
//
// Fault injection: FailNextCommit(status) makes the next Commit fail with
// `status` without applying anything; FailCommitsAfter(n) lets n more commits
// succeed and fails every one after that (until ClearFaults). A failed commit
// leaves the state exactly as it was, as a real backend's rolled-back
// transaction would.
//
// Thread-safe: one mutex guards everything; Lock() never sleeps holding it.
#pragma once

#include <cstdint>
#include <optional>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/state/state_store.h"

namespace cairn {

class MemoryStateStore final : public StateStore {
 public:
  // `clock` (not owned, must outlive the store) times lock waits and stamps
  // locks.
  explicit MemoryStateStore(Clock* clock = &SystemClock());

  Result<StateSnapshot> Load() override;
  Result<LockInfo> Lock(const std::string& operation, std::chrono::milliseconds wait) override;
  Status Unlock(const std::string& lock_id) override;
  Status ForceUnlock(const std::string& lock_id) override;
  Result<std::optional<LockInfo>> CurrentLock() override;
  Result<int64_t> ReserveSequences(int64_t count) override;
  Status JournalBeginAll(std::span<const JournalEntry> entries) override;
  Result<std::vector<JournalEntry>> PendingJournal() override;
  Result<int64_t> Commit(const StateCommit& commit) override;
  Status Sync() override { return Status::Ok(); }  // nothing is durable here
  // Nothing is at rest: nothing to rewrite.
  Result<RekeyResult> Rekey() override { return RekeyResult{}; }
  // Its state is this process's alone: always held.
  Result<bool> TryWatchLease(const std::string&, std::string*) override { return true; }

  // Fault hooks (see the class comment).
  void FailNextCommit(Status status);
  void FailCommitsAfter(int n, Status status = Status::Unavailable("injected commit failure"));
  void ClearFaults();
  // Commits attempted so far, failed ones included.
  int commit_attempts();

 private:
  Result<LockInfo> TryLock(const std::string& operation) EXCLUDES(mu_);

  Clock* const clock_;
  Mutex mu_;
  StateSnapshot state_ GUARDED_BY(mu_);
  std::map<int64_t, JournalEntry> journal_ GUARDED_BY(mu_);
  int64_t sequence_ GUARDED_BY(mu_) = 0;
  std::optional<LockInfo> lock_ GUARDED_BY(mu_);
  std::optional<Status> fail_next_ GUARDED_BY(mu_);
  std::optional<int> commits_before_failure_ GUARDED_BY(mu_);
  Status fail_after_status_ GUARDED_BY(mu_);
  int commit_attempts_ GUARDED_BY(mu_) = 0;
};

}  // namespace cairn
