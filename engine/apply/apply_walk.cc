#include "engine/apply/apply_walk.h"

#include <algorithm>

namespace cairn {

ApplyWalk::ApplyWalk(const ApplyGraph& graph) {
  steps_.reserve(graph.nodes.size());
  for (const ApplyNode& n : graph.nodes) {
    steps_.push_back(Step{n.change->address, n.successors, n.predecessors, State::kWaiting});
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!graph.nodes[i].journaled && steps_[i].pending == 0) ready_.insert(i);
  }
}

size_t ApplyWalk::TakeReady() {
  size_t node = *ready_.begin();
  ready_.erase(ready_.begin());
  return node;
}

void ApplyWalk::Start(size_t node) { steps_[node].state = State::kRunning; }

size_t ApplyWalk::Done(size_t node) {
  steps_[node].state = State::kDone;
  size_t now_ready = 0;
  for (size_t s : steps_[node].successors) {
    if (--steps_[s].pending == 0 && steps_[s].state == State::kWaiting) {
      ready_.insert(s);
      ++now_ready;
    }
  }
  return now_ready;
}

std::vector<size_t> ApplyWalk::Fail(size_t node) {
  steps_[node].state = State::kFailed;
  std::vector<size_t> skipped;
  std::vector<size_t> work = steps_[node].successors;
  while (!work.empty()) {
    size_t s = work.back();
    work.pop_back();
    if (steps_[s].state != State::kWaiting) continue;
    steps_[s].state = State::kSkipped;
    ready_.erase(s);
    skipped.push_back(s);
    work.insert(work.end(), steps_[s].successors.begin(), steps_[s].successors.end());
  }
  return skipped;
}

int ApplyWalk::waiting() const {
  return static_cast<int>(std::count_if(steps_.begin(), steps_.end(),
                                        [](const Step& s) { return s.state == State::kWaiting; }));
}

}  // namespace cairn
