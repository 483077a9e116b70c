#include "cli/saved_plan_file.h"

#include "base/env.h"
#include "base/value.h"

namespace cairn::cli {

std::optional<Plan> ReadSavedPlan(const std::string& path, std::string& error) {
  const Env& env = PosixEnv();
  if (!env.Exists(path) || env.IsDirectory(path)) return std::nullopt;
  auto text = env.ReadFile(path, kMaxSavedPlanBytes);
  if (!text.ok()) {
    error = path + " is neither a stack directory nor a saved plan: " + text.status().message();
    return std::nullopt;
  }
  auto parsed = ParseJson(*text);
  Value j = parsed.ok() ? std::move(*parsed) : Value();
  if (!j.is_object() || !j.contains("format_version")) {
    error = path + " is neither a stack directory nor a saved plan";
    return std::nullopt;
  }
  auto plan = PlanFromJson(j);
  if (!plan.ok()) {
    error = path + ": " + plan.status().message();
    return std::nullopt;
  }
  if (!plan->saved) {
    error = path +
            " is a plan printed by 'cairn plan --json', which is for reading: its sensitive values "
            "are redacted, so it cannot be applied. Save a plan to apply with 'cairn plan --out "
            "FILE'";
    return std::nullopt;
  }
  return std::move(*plan);
}

}  // namespace cairn::cli
