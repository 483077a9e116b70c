// JournalBatcher: when an apply run journals ready operations ahead, how
// many at once, and which journaled ones are waiting to be sent. The
// exactly-once protocol (engine/state/state_store.h) journals each
// operation before its request is sent; journaling several in one
// JournalBeginAll makes one synced write serve many operations.
//
// A worker that starts an operation journals the next ones ahead when
// fewer than half the workers' worth are journaled (low water), up to one
// and a half times the workers (the target); with one worker, one at a
// time, just before it runs. One chunk is written at a time: until its
// write is over (Written), no other is taken.
//
// Not thread-safe: the run keeps it under its lock (ApplyRun::mu_), as it
// keeps the ApplyWalk it takes ready nodes from. It writes nothing itself
// but through Write, outside that lock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/apply/apply_walk.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

class JournalBatcher {
 public:
  // `workers`: the run's workers (at least 1).
  explicit JournalBatcher(int workers);

  // Ready operations may be journaled ahead now: none is being journaled,
  // the walk has ready ones, and fewer than the target are journaled. The
  // bound matters when max_pending operations wait: nothing can be sent
  // then, and a worker woken to journal with the queue full would have
  // nothing to journal, yet take the one chunk slot, which only Written
  // frees: nothing would ever be journaled again (an apply of 1 network +
  // 300 instances with --max-pending 50 once stopped after 1 + 50 + 15
  // commits).
  bool MayJournal(const ApplyWalk& walk) const;
  // The chunk a worker journals now, taken from the walk's ready nodes (in
  // its order) up to the target: empty unless MayJournal and, for a worker
  // that has an operation to send (`sending`), fewer than low water are
  // journaled. Not empty: the chunk slot is taken until Written.
  std::vector<size_t> TakeChunk(ApplyWalk& walk, bool sending);
  // The chunk's write is over: `journaled` (those written) may be sent, in
  // this order; the chunk slot is free again.
  void Written(std::span<const size_t> journaled);
  // An operation journaled already (an interrupted run's), to send.
  void Offer(size_t node) { journaled_.push_back(node); }

  bool has_journaled() const { return !journaled_.empty(); }
  // The next journaled operation, no longer offered. REQUIRES: has_journaled().
  size_t TakeJournaled();
  // A chunk is being written.
  bool writing() const { return writing_; }
  // Journaled, never taken: what a stopped run clears.
  const std::deque<size_t>& journaled() const { return journaled_; }

  size_t low_water() const { return low_water_; }
  size_t target() const { return target_; }

  // Journals `entries` in one synced write, passing the crash point
  // "apply.journaled" once per entry when it succeeded.
  static Status Write(StateStore& store, std::span<const JournalEntry> entries);

 private:
  size_t low_water_, target_;
  std::deque<size_t> journaled_;  // in journal order
  bool writing_ = false;
};

// The journal entry of an operation of `change` (op: kCreate, kUpdate or
// kDelete; `deposed`: the delete of the object a create-then-delete replace
// deposed), whose request is `prepared`, numbered `seq` in the state of
// `lineage`, started at `now` (unix seconds). Its context holds what a
// recovery needs without the plan: the dependencies and, for the create of
// a create-then-delete replace, the id of the object it deposes.
JournalEntry JournalEntryFor(const PlannedChange& change, Action op, bool deposed, int64_t seq,
                             const std::string& lineage, const PreparedMutation& prepared,
                             int64_t now);

}  // namespace cairn
