// Durations on the command line: an integer followed by ms, s, m, h or d
// ("0" alone is allowed): 0, 500ms, 2s, 10m, 24h, 7d.
#pragma once

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace cairn::server {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace cairn::server
