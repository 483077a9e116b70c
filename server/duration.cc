#include "server/duration.h"

#include <charconv>
#include <string>

namespace cairn::server {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n < 0) {
    return Status::InvalidArgument("invalid duration '" + std::string(text) +
                                   "' (expected e.g. 0, 500ms, 2s, 10m, 24h)");
  }
  std::string_view unit(p, text.data() + text.size() - p);
  int64_t ms_per = 0;
  if (unit == "ms") {
    ms_per = 1;
  } else if (unit == "s") {
    ms_per = 1000;
  } else if (unit == "m") {
    ms_per = 60'000;
  } else if (unit == "h") {
    ms_per = 3'600'000;
  } else if (unit == "d") {
    ms_per = 86'400'000;
  } else if (unit.empty() && n == 0) {
    ms_per = 1;
  } else {
    return Status::InvalidArgument("invalid duration '" + std::string(text) +
                                   "' (expected e.g. 0, 500ms, 2s, 10m, 24h)");
  }
  if (n > INT64_MAX / ms_per / 2) return Status::InvalidArgument("duration too large");
  return std::chrono::milliseconds(n * ms_per);
}

}  // namespace cairn::server
