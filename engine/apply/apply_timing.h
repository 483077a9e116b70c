// OperationTimes: when each operation of an apply run started, for its
// duration in progress events, and which long-running ones the run's
// monitor reports as still running: one report per `interval` of an
// operation's run time, however often the monitor looks.
//
// Not thread-safe: the run keeps it under its lock (ApplyRun::mu_).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "base/clock.h"

namespace cairn {

class OperationTimes {
 public:
  explicit OperationTimes(size_t nodes) : times_(nodes) {}

  void Start(size_t node, Clock::time_point at) { times_[node].started = at; }
  Clock::time_point started(size_t node) const { return times_[node].started; }
  // How long node `node` has run at `now`.
  std::chrono::milliseconds Elapsed(size_t node, Clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - times_[node].started);
  }

  // The nodes `running` says still run whose run time has grown by at least
  // `interval` since they were last reported (or started), with that run
  // time, in node order; each counts as reported now.
  std::vector<std::pair<size_t, std::chrono::milliseconds>> StillRunning(
      Clock::time_point now, std::chrono::milliseconds interval,
      const std::function<bool(size_t)>& running);

 private:
  struct Times {
    Clock::time_point started;
    std::chrono::milliseconds last_report{0};
  };
  std::vector<Times> times_;
};

}  // namespace cairn
