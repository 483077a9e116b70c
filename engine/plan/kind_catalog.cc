#include "base/identifiers.h"
#include "engine/plan/plan.h"

namespace cairn {
namespace {

Value CanonicalIds(const KindCatalog& kinds, const Value& v) {
  if (v.is_string()) return CanonicalId(kinds, v.get<std::string>());
  if (!v.is_array()) return v;
  Value out = Value::array();
  for (const auto& item : v) out.push_back(CanonicalIds(kinds, item));
  return out;
}

}  // namespace

std::string CanonicalId(const KindCatalog& kinds, std::string_view id) {
  if (IsUuid(id)) return CanonicalIdWith(id, {});
  for (const auto& [kind, info] : kinds) {
    if (!info.id_alias.empty() && id.starts_with(info.id_alias)) {
      return CanonicalIdWith(id, {info.id_alias});
    }
  }
  return std::string(id);
}

bool SameFieldValue(const KindCatalog& kinds, const Value& before, const Value& after,
                    bool is_reference) {
  if (before == after) return true;
  return is_reference && CanonicalIds(kinds, before) == CanonicalIds(kinds, after);
}

}  // namespace cairn
