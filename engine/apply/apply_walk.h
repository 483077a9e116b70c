// ApplyWalk: the walk over an ApplyGraph that decides what may start. A
// node is ready once every node before it is done; a failed node skips,
// transitively, every node after it that has not started. Ready nodes are
// taken in address order, so that a run is deterministic. A journaled node
// (ApplyGraph::FromJournal) is never ready: the run offers it at once.
//
// Not thread-safe: the run keeps it under its lock (ApplyRun::mu_). It
// knows nothing of requests, journals or threads.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/apply/apply_graph.h"

namespace cairn {

class ApplyWalk {
 public:
  enum class State { kWaiting, kRunning, kDone, kFailed, kSkipped };

  explicit ApplyWalk(const ApplyGraph& graph);
  ApplyWalk(const ApplyWalk&) = delete;  // ready_ points into steps_
  ApplyWalk& operator=(const ApplyWalk&) = delete;

  bool has_ready() const { return !ready_.empty(); }
  // The ready node first by address, no longer ready. REQUIRES: has_ready().
  size_t TakeReady();
  // The node's operation has started (a ready or journaled node).
  void Start(size_t node);
  // The node is done: what waited only for it becomes ready. Returns how
  // many nodes did.
  size_t Done(size_t node);
  // The node failed (started or not): every node after it still waiting
  // is skipped, returned in the order they were found.
  std::vector<size_t> Fail(size_t node);

  State state(size_t node) const { return steps_[node].state; }
  // Nodes never started, nor skipped.
  int waiting() const;

 private:
  struct Step {
    std::string address;  // the order among ready nodes
    std::vector<size_t> successors;
    int pending = 0;  // nodes before it not done yet
    State state = State::kWaiting;
  };
  struct ByAddress {
    const std::vector<Step>* steps;
    bool operator()(size_t a, size_t b) const {
      const std::string& x = (*steps)[a].address;
      const std::string& y = (*steps)[b].address;
      return x != y ? x < y : a < b;
    }
  };
  std::vector<Step> steps_;
  std::set<size_t, ByAddress> ready_{ByAddress{&steps_}};
};

}  // namespace cairn
