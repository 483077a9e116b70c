// Reading a saved plan file (`cairn plan --out FILE`), for the commands
// that take one: `cairn apply PLAN`, `cairn show PLAN`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "base/status.h"
#include "engine/plan/plan.h"
#include "engine/state/state_cipher.h"

namespace cairn::cli {

// The largest saved plan read: a plan of 100,000 creates is about 100 MB.
inline constexpr size_t kMaxSavedPlanBytes = size_t{2} << 30;

// The saved plan in file `path`; nullopt when `path` does not exist or is
// a directory (a stack), or, with `error` set, when it is something else
// than a saved plan (not a regular file, not a plan, a plan of another
// format, or one printed by `cairn plan --json`, whose sensitive values are
// redacted).
// An encrypted plan file is a JSON object {"format_version", "encrypted":
// SealDocument(...)} (docs/plan-format.md); it is opened with the key its
// envelope names, and a wrong or missing key is `error`, naming the file.
std::optional<Plan> ReadSavedPlan(const std::string& path, std::string& error);

// The record kind a saved plan is sealed as.
inline constexpr std::string_view kSealedPlan = "saved plan";

// What `cairn plan --out` writes for `plan_json` (PlanToJsonText): itself
// and a newline, or, when the backend has an encryption key, the plan sealed
// under it. InvalidArgument naming the key's source when it is missing.
Result<std::string> SavedPlanFileText(std::string plan_json, const StateEncryptionSpec& encryption,
                                      const std::string& stack_root);

}  // namespace cairn::cli
