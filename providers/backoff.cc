#include "providers/backoff.h"

#include <algorithm>
#include <cmath>

namespace cairn {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double unit_random,
                                       std::optional<std::chrono::seconds> retry_after) {
  if (retry_after) return std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after);
  double base = static_cast<double>(policy.initial.count()) *
                std::pow(policy.multiplier, std::max(0, std::min(attempt, 30)));
  double capped = std::min(base, static_cast<double>(policy.max.count()));
  double r = std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(capped / 2 + r * capped / 2));
}

}  // namespace cairn
