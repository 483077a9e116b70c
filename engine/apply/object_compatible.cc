#include "engine/apply/object_compatible.h"

#include "engine/plan/conditions.h"

namespace cairn {

std::vector<Diagnostic> AssertObjectCompatible(const PlannedChange& change, const Value& returned,
                                               const KindCatalog& kinds,
                                               const std::vector<std::string>& sensitive) {
  std::vector<Diagnostic> out;
  auto info = kinds.find(change.kind);
  for (const AttributeChange& planned : change.changes) {
    if (ContainsUnknown(planned.after)) continue;  // anything may come back
    Value got = returned.is_object() && returned.contains(planned.field)
                    ? returned.at(planned.field)
                    : Value(nullptr);
    const bool is_reference =
        info != kinds.end() && info->second.references.count(planned.field) > 0;
    if (SameFieldValue(kinds, got, planned.after, is_reference)) continue;
    out.push_back(
        {Severity::kError,
         "inconsistent_result",
         MaskSecrets(change.address + ": the API returned " + planned.field + " = " +
                         got.dump(-1, ' ', false, Value::error_handler_t::replace) +
                         ", but the plan promised " +
                         planned.after.dump(-1, ' ', false, Value::error_handler_t::replace),
                     sensitive),
         "the resource exists and is recorded as the API returned it; what depends on it was "
         "not applied. The API changed a value it was sent: please report it",
         {}});
  }
  return out;
}

}  // namespace cairn
