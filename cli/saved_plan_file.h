// Reading a saved plan file (`cairn plan --out FILE`), for the commands
// that take one: `cairn apply PLAN`, `cairn show PLAN`.
#pragma once

#include <optional>
#include <string>

#include "engine/plan/plan.h"

namespace cairn::cli {

// The saved plan in file `path`; nullopt when `path` is no regular file
// (a stack directory), or, with `error` set, when it is a file but no
// saved plan (not a plan, a plan of another format, or one printed by
// `cairn plan --json`, whose sensitive values are redacted).
std::optional<Plan> ReadSavedPlan(const std::string& path, std::string& error);

}  // namespace cairn::cli
