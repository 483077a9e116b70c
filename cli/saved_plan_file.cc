#include "cli/saved_plan_file.h"

#include <openssl/crypto.h>

#include "base/env.h"
#include "base/value.h"
#include "engine/state/state_cipher.h"

namespace cairn::cli {

Result<std::string> SavedPlanFileText(std::string plan_json, const StateEncryptionSpec& encryption,
                                      const std::string& stack_root) {
  if (!encryption.key) {
    plan_json += '\n';  // in place: the text of 100,000 changes is 130 MB
    return plan_json;
  }
  Result<Value> sealed = SealDocument(plan_json, *encryption.key, kSealedPlan, stack_root);
  OPENSSL_cleanse(plan_json.data(), plan_json.size());
  if (!sealed.ok()) return sealed.status();
  Value envelope = {{"format_version", Plan::kFormatVersion}, {"encrypted", std::move(*sealed)}};
  return envelope.dump(2) + "\n";
}

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
  if (j.is_object() && j.contains("format_version") && j.contains("encrypted")) {
    // Sealed by `cairn plan --out` under the backend's encryption key.
    auto plain = OpenDocument(j["encrypted"], kSealedPlan, "the saved plan " + path);
    if (!plain.ok()) {
      error = plain.status().message();
      return std::nullopt;
    }
    auto inner = ParseJson(*plain);
    OPENSSL_cleanse(plain->data(), plain->size());
    j = inner.ok() ? std::move(*inner) : Value();
  }
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
