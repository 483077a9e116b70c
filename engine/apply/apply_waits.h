// WaitHandOff: the operations of an apply run whose requests were answered
// and whose waits (until ready, or deleted) the provider's watcher holds
// (Provider::Watch), and those whose waits are over, for a worker to
// finish. A worker holds an operation only while its request is in flight
// or its result is being recorded, never while the resource provisions:
// at most `max_pending` operations wait at once, and a further one is sent
// only when one of them is over.
//
// A worker reserves a slot before it sends (so the bound holds while the
// request is in flight), and gives it back if the operation did not wait
// after all; the watcher's callback settles it with the wait's response.
// Settled operations are finished in the order their waits ended.
//
// Not thread-safe: the run keeps it under its lock (ApplyRun::mu_), which
// the watcher's callback takes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <utility>

#include "engine/provider/provider.h"

namespace cairn {

class WaitHandOff {
 public:
  explicit WaitHandOff(int max_pending)
      : max_pending_(static_cast<size_t>(std::max(1, max_pending))) {}

  // Another operation may be sent: fewer than max_pending wait.
  bool has_room() const { return pending_ < max_pending_; }
  // A slot for an operation about to be sent.
  void Reserve() { ++pending_; }
  // The operation did not wait (refused, or already gone): its slot is free.
  void Release() { --pending_; }
  // The watcher's answer for `node`: its slot is free, and it waits for a
  // worker to finish it.
  void Settle(size_t node, WaitResponse response);

  bool has_settled() const { return !settled_.empty(); }
  // The first settled operation and its wait's response. REQUIRES: has_settled().
  std::pair<size_t, WaitResponse> TakeSettled();
  // Nothing sent waits, nor anything settled is left to finish.
  bool idle() const { return pending_ == 0 && settled_.empty(); }
  // Operations sent and not settled yet (slots reserved).
  size_t pending() const { return pending_; }

 private:
  size_t max_pending_;
  size_t pending_ = 0;
  std::deque<std::pair<size_t, WaitResponse>> settled_;
};

}  // namespace cairn
