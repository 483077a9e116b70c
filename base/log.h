// Logging through spdlog. Every line goes through a sink that applies
// Redact() (base/redact.h) before it is written, so no API token reaches a
// log. Logs go to stderr; stdout is for command output.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// Level names: trace, debug, info, warn, error, critical, off.
// `flag_level` (from --log-level) wins over the CAIRN_LOG environment
// variable, which wins over the default "warn". An unknown name is an
// InvalidArgument naming the accepted values.
Status InitLogging(std::string_view flag_level);

// The level InitLogging would choose, without side effects.
Result<std::string> ResolveLogLevel(std::string_view flag_level, const char* env_value);

}  // namespace cairn
