#include "engine/plan/conditions.h"

namespace cairn {

ConditionVerdict DecideCondition(const ConditionConfig& c, const AttributeLookup& lookup,
                                 const Value* self, const std::vector<std::string>& secrets) {
  using Kind = ConditionVerdict::Kind;
  Value v = ResolveReferences(c.condition, lookup, self);
  if (ContainsUnknown(v)) return {Kind::kUnknown, ""};
  if (!v.is_boolean()) {
    return {Kind::kInvalid, "a condition must be true or false, not " + v.dump()};
  }
  if (v.get<bool>()) return {Kind::kHolds, ""};
  // The message as far as it resolves; its text as written otherwise.
  Value m = ResolveReferences(c.error_message, lookup, self);
  std::string message = m.is_string() && !ContainsUnknown(m) ? m.get<std::string>()
                        : c.error_message.is_string()        ? c.error_message.get<std::string>()
                                                             : c.error_message.dump();
  return {Kind::kFails, MaskSecrets(std::move(message), secrets)};
}

std::string MaskSecrets(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      text.replace(at, secret.size(), "(sensitive value)");
    }
  }
  return text;
}

}  // namespace cairn
