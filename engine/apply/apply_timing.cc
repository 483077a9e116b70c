#include "engine/apply/apply_timing.h"

namespace cairn {

std::vector<std::pair<size_t, std::chrono::milliseconds>> OperationTimes::StillRunning(
    Clock::time_point now, std::chrono::milliseconds interval,
    const std::function<bool(size_t)>& running) {
  std::vector<std::pair<size_t, std::chrono::milliseconds>> due;
  for (size_t i = 0; i < times_.size(); ++i) {
    if (!running(i)) continue;
    std::chrono::milliseconds elapsed = Elapsed(i, now);
    if (elapsed - times_[i].last_report >= interval) {
      times_[i].last_report = elapsed;
      due.emplace_back(i, elapsed);
    }
  }
  return due;
}

}  // namespace cairn
