// Reading a saved plan file (`cairn plan --out FILE`), for the commands
// that take one: `cairn apply PLAN`, `cairn show PLAN`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engine/plan/plan.h"

namespace cairn::cli {

// The largest saved plan read: a plan of 100,000 creates is about 100 MB.
inline constexpr size_t kMaxSavedPlanBytes = size_t{2} << 30;

// The saved plan in file `path`; nullopt when `path` does not exist or is
// a directory (a stack), or, with `error` set, when it is something else
// than a saved plan (not a regular file, not a plan, a plan of another
// format, or one printed by `cairn plan --json`, whose sensitive values are
// redacted).
std::optional<Plan> ReadSavedPlan(const std::string& path, std::string& error);

}  // namespace cairn::cli
