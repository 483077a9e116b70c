// The recorder of an apply run: what each operation that has taken effect
// commits to the state, and the hand-off of deferred commits from the
// workers to the run's recorder thread.
//
// A create or update, once its wait is over, commits the resource as the
// API returned it (ResultCommit), with the journal entry it completes; a
// delete removes its record (DeleteCommit). A commit that need not be
// synced at once (Durability::kDeferred) is handed to the recorder thread
// (RecordQueue) and the worker goes on to the next operation instead of
// waiting for the state's write queue; a synced one is committed by the
// worker itself, where the state's group commit can share one sync among
// the workers. The journal entry stands for the operation until its commit
// (the protocol: engine/state/state_store.h).
//
// RecordQueue is not thread-safe: the run keeps it under its lock
// (ApplyRun::mu_). The commit functions are pure; RecordCommit writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

// What a create or update of `change` (op kCreate or kUpdate, journaled as
// `seq`) commits once its wait is over: `remote`, the resource as the API
// last returned it, recorded whatever the wait said (put[0], tainted when
// the wait saw it fail); for the create of a create-then-delete replace,
// the old object too, as deposed, until its delete commits (put[1]).
StateCommit ResultCommit(const PlannedChange& change, Action op, int64_t seq, RemoteResource remote,
                         const WaitResponse& wait, Durability durability);

// What a delete of `change` (journaled as `seq`) that took effect, or found
// nothing to delete, commits: the record removed (for a `deposed` delete,
// the deposed object's).
StateCommit DeleteCommit(const PlannedChange& change, bool deposed, int64_t seq);

// Commits `commit`, then passes the crash point "apply.committed" (or
// "recover.committed" for an interrupted run's operation, `recovered`).
Result<int64_t> RecordCommit(StateStore& store, const StateCommit& commit, bool recovered);

// Deferred commits handed from the workers to the recorder thread, in the
// order they took effect.
class RecordQueue {
 public:
  // `capacity`: how far behind the recorder may fall (the run's workers);
  // beyond it, the worker commits itself.
  explicit RecordQueue(size_t capacity) : capacity_(capacity) {}

  // Takes node `node`'s commit for the recorder thread: true when it is
  // deferred and fewer than `capacity` wait; false, the worker commits.
  bool HandOff(size_t node, Durability durability);
  bool has_next() const { return !queue_.empty(); }
  // The next node to commit, for the recorder thread. REQUIRES: has_next().
  size_t TakeNext();
  // A node taken is committed and complete.
  void Recorded() { --recording_; }
  // Nodes handed over and not complete yet.
  bool busy() const { return recording_ > 0; }

  // The workers have left: the recorder leaves once nothing is queued.
  void WorkersGone() { workers_gone_ = true; }
  // What the recorder thread waits for: a node to commit, or its end.
  bool ShouldWake() const { return !queue_.empty() || workers_gone_; }

 private:
  size_t capacity_;
  std::deque<size_t> queue_;
  int recording_ = 0;
  bool workers_gone_ = false;
};

}  // namespace cairn
