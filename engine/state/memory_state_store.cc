#include "engine/state/memory_state_store.h"

#include <algorithm>

#include "engine/state/commit_check.h"
#include "engine/state/state_lock.h"

namespace cairn {

MemoryStateStore::MemoryStateStore(Clock* clock) : clock_(clock) {
  Result<std::string> lineage = RandomUuid();
  // RAND_bytes does not fail on a working system; a fixed lineage would still
  // behave correctly for a store that lives in one process.
  state_.lineage = lineage.ok() ? *lineage : "00000000-0000-4000-8000-000000000000";
}

Result<StateSnapshot> MemoryStateStore::Load() {
  MutexLock lock(mu_);
  StateSnapshot snap = state_;
  snap.sequence = sequence_;
  return snap;
}

Result<LockInfo> MemoryStateStore::TryLock(const std::string& operation) {
  Result<std::string> id = RandomUuid();
  if (!id.ok()) return id.status();
  MutexLock lock(mu_);
  if (lock_) return LockConflict(*lock_);
  lock_ = LockInfo{*id, CurrentLockHolder(), operation, clock_->UnixSeconds()};
  return *lock_;
}

Result<LockInfo> MemoryStateStore::Lock(const std::string& operation,
                                        std::chrono::milliseconds wait) {
  return WaitForLock(*clock_, wait, [&] { return TryLock(operation); });
}

Status MemoryStateStore::Unlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  if (!lock_) return Status::NotFound("state is not locked");
  if (lock_->id != lock_id) {
    return Status::Conflict("state lock " + lock_id + " is not held; the lock is now " + lock_->id);
  }
  lock_.reset();
  return Status::Ok();
}

Status MemoryStateStore::ForceUnlock(const std::string& lock_id) {
  MutexLock lock(mu_);
  if (!lock_ || lock_->id != lock_id) {
    return Status::NotFound("no state lock with ID " + lock_id);
  }
  lock_.reset();
  return Status::Ok();
}

Result<std::optional<LockInfo>> MemoryStateStore::CurrentLock() {
  MutexLock lock(mu_);
  return lock_;
}

Result<int64_t> MemoryStateStore::ReserveSequences(int64_t count) {
  CAIRN_RETURN_IF_ERROR(CheckSequenceCount(count));
  MutexLock lock(mu_);
  int64_t first = sequence_ + 1;
  sequence_ += count;
  return first;
}

Status MemoryStateStore::JournalBeginAll(std::span<const JournalEntry> entries) {
  CAIRN_RETURN_IF_ERROR(CheckJournalEntries(entries));
  MutexLock lock(mu_);
  for (const JournalEntry& entry : entries) {
    if (journal_.count(entry.seq)) {
      return Status::AlreadyExists("journal entry " + std::to_string(entry.seq) +
                                   " already exists");
    }
  }
  for (const JournalEntry& entry : entries) journal_.emplace(entry.seq, entry);
  return Status::Ok();
}

Result<std::vector<JournalEntry>> MemoryStateStore::PendingJournal() {
  MutexLock lock(mu_);
  std::vector<JournalEntry> out;
  for (const auto& [seq, e] : journal_) out.push_back(e);
  return out;
}

Result<int64_t> MemoryStateStore::Commit(const StateCommit& commit) {
  CAIRN_RETURN_IF_ERROR(CheckCommit(commit));
  MutexLock lock(mu_);
  ++commit_attempts_;
  if (fail_next_) {
    Status s = std::move(*fail_next_);
    fail_next_.reset();
    return s;
  }
  if (commits_before_failure_) {
    if (*commits_before_failure_ <= 0) return fail_after_status_;
    --*commits_before_failure_;
  }
  // Apply to a copy, then swap: all or nothing.
  std::map<std::string, ResourceState> resources = state_.resources;
  for (const auto& [from, to] : commit.moves) {
    auto it = resources.find(from);
    if (it == resources.end()) {
      return Status::NotFound("state mv: no resource " + from + " in the state");
    }
    if (resources.count(to) != 0) {
      return Status::AlreadyExists("state mv: " + to + " already exists in the state");
    }
    ResourceState moved = std::move(it->second);
    resources.erase(it);
    moved.address = to;
    resources.emplace(to, std::move(moved));
  }
  for (const ResourceState& r : commit.put) resources[r.address] = r;
  for (const std::string& a : commit.remove) resources.erase(a);
  if (commit.journal_done && journal_.count(*commit.journal_done) == 0) {
    return Status::NotFound("journal entry " + std::to_string(*commit.journal_done) +
                            " is not pending");
  }
  state_.resources = std::move(resources);
  if (commit.journal_done) journal_.erase(*commit.journal_done);
  if (commit.outputs) {
    state_.outputs = *commit.outputs;
    state_.sensitive_outputs = commit.sensitive_outputs;
  }
  if (commit.restore) {
    state_.lineage = commit.restore->lineage;
    state_.serial = std::max(state_.serial + 1, commit.restore->min_serial);
    sequence_ = std::max(sequence_, commit.restore->min_sequence);
    return state_.serial;
  }
  return ++state_.serial;
}

void MemoryStateStore::FailNextCommit(Status status) {
  if (status.ok()) status = Status::Unavailable("injected commit failure");
  MutexLock lock(mu_);
  fail_next_ = std::move(status);
}

void MemoryStateStore::FailCommitsAfter(int n, Status status) {
  if (status.ok()) status = Status::Unavailable("injected commit failure");
  MutexLock lock(mu_);
  commits_before_failure_ = n;
  fail_after_status_ = std::move(status);
}

void MemoryStateStore::ClearFaults() {
  MutexLock lock(mu_);
  fail_next_.reset();
  commits_before_failure_.reset();
}

int MemoryStateStore::commit_attempts() {
  MutexLock lock(mu_);
  return commit_attempts_;
}

}  // namespace cairn
