#include "providers/ready_estimate.h"

#include <algorithm>

namespace cairn {

ReadyEstimate::ReadyEstimate(Duration initial, Duration floor, Duration ceiling)
    : initial_(std::clamp(initial, floor, ceiling)), floor_(floor), ceiling_(ceiling) {}

ReadyEstimate::Duration ReadyEstimate::FirstPoll(const std::string& kind) const {
  MutexLock lock(mu_);
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? initial_ : it->second;
}

void ReadyEstimate::Record(const std::string& kind, bool on_first_poll, Duration took) {
  MutexLock lock(mu_);
  auto [it, inserted] = by_kind_.try_emplace(kind, initial_);
  Duration& d = it->second;
  // A miss never takes the estimate past what readiness took: many creates
  // that miss together (the API slowed down for a moment) raise it once, not
  // once each.
  Duration next = on_first_poll ? d * 9 / 10 : std::max({d, std::min(d * 3 / 2, took), took / 2});
  d = std::clamp(next, floor_, ceiling_);
}

void ReadyEstimate::NotYet(const std::string& kind, Duration seen) {
  MutexLock lock(mu_);
  auto [it, inserted] = by_kind_.try_emplace(kind, initial_);
  it->second = std::clamp(std::max(it->second, 2 * seen), floor_, ceiling_);
}

}  // namespace cairn
