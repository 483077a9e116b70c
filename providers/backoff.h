// Backoff: the delay before retry number `attempt` of a failed request:
// exponential growth from `initial` by `multiplier`, capped at `max`, with
// "full jitter" (a uniform draw in [delay/2, delay]) so that many clients
// retrying together spread out. A Retry-After from the server overrides the
// computed delay. The caller bounds the total with its per-operation deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace cairn {

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{10'000};
  double multiplier = 2.0;
};

// `attempt` is 0 for the first retry. `unit_random` is a draw in [0, 1).
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double unit_random,
                                       std::optional<std::chrono::seconds> retry_after = {});

}  // namespace cairn
