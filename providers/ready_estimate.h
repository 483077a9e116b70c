// ReadyEstimate: how long, after a create, to wait before the first poll for
// readiness, learnt per kind from the creates so far.
//
// A fixed first delay is wrong both ways: too short on a slow API (an
// instance that takes 30 s to provision costs a dozen polls of backoff), too
// long on a fast one (the operation holds a --parallelism slot, waiting). So
// the delay adapts, like a congestion window: a first poll that finds the
// resource ready shrinks it by 10%; one that does not grows it by half, but
// not beyond the time readiness actually took, and at least to half that time
// (a fast start on a slow API). It settles where about one first poll in
// five comes too early (more when many creates finish at once), so most
// creates cost one read. The floor may be zero (an API whose creates are
// ready as soon as they are answered); a miss from there raises the
// estimate to half of what readiness took.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "base/mutex.h"

namespace cairn {

class ReadyEstimate {
 public:
  using Duration = std::chrono::microseconds;

  // Every kind starts at `initial`; estimates stay within [floor, ceiling].
  ReadyEstimate(Duration initial, Duration floor, Duration ceiling);

  // The delay before the first poll after creating a resource of `kind`.
  Duration FirstPoll(const std::string& kind) const;

  // A wait that began right after a create of `kind` saw the resource ready
  // `took` after it began; `on_first_poll`: at the first poll.
  void Record(const std::string& kind, bool on_first_poll, Duration took);
  // A first poll `seen` after the create found it not ready yet: the next
  // waits at least twice that long before theirs (until one that settles
  // says how long readiness really takes).
  void NotYet(const std::string& kind, Duration seen);

 private:
  const Duration initial_, floor_, ceiling_;
  mutable Mutex mu_;
  std::map<std::string, Duration> by_kind_ GUARDED_BY(mu_);
};

}  // namespace cairn
