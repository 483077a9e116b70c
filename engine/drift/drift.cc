#include "engine/drift/drift.h"

#include <algorithm>
#include <set>

namespace cairn {
namespace {

Value Canonical(const Value& v, const std::function<std::string(const std::string&)>& canon) {
  if (!canon) return v;
  if (v.is_string()) return canon(v.get<std::string>());
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& item : v) out.push_back(Canonical(item, canon));
    return out;
  }
  return v;
}

}  // namespace

DriftReport DetectDrift(const StateSnapshot& state, const RefreshResult& refresh,
                        const KindCatalog& kinds, const UnmanagedScope& unmanaged,
                        const std::function<std::string(const std::string&)>& canonical_id) {
  DriftReport report;
  std::set<std::string> tracked;  // kind/canonical id
  auto canon = [&](const std::string& id) { return canonical_id ? canonical_id(id) : id; };
  for (const auto& [addr, rs] : state.resources) {
    tracked.insert(rs.kind + "/" + canon(rs.id));
    auto lv = refresh.live.find(addr);
    if (lv == refresh.live.end()) continue;  // not refreshed (its listing failed)
    if (!lv->second) {
      report.items.push_back({DriftItem::Type::kDeleted, addr, rs.kind, rs.id, "", {}});
      continue;
    }
    const Value& live = *lv->second;
    if (auto status = live.find("status"); status != live.end() && *status == "failed") {
      report.items.push_back({DriftItem::Type::kFailed, addr, rs.kind, rs.id, "", {}, rs.tainted});
    }
    const KindInfo* info = kinds.count(rs.kind) ? &kinds.at(rs.kind) : nullptr;
    DriftItem item{DriftItem::Type::kChanged, addr, rs.kind, rs.id, "", {}};
    for (const auto& [field, before] : rs.attributes.items()) {
      if (field == "id" || (info && info->computed.count(field))) continue;
      Value after = live.contains(field) ? live.at(field) : Value(nullptr);
      bool is_ref = info && info->references.count(field);
      if (is_ref ? Canonical(before, canonical_id) == Canonical(after, canonical_id)
                 : before == after) {
        continue;
      }
      item.changes.push_back({field, before, after, info && info->immutable.count(field) > 0});
    }
    if (!item.changes.empty()) report.items.push_back(std::move(item));
  }
  if (unmanaged.enabled) {
    for (const auto& [kind, resources] : refresh.listed) {
      for (const auto& r : resources) {
        std::string key = kind + "/" + canon(r.id);
        if (tracked.count(key) || unmanaged.managed_elsewhere.count(key)) continue;
        auto name_it = r.attributes.find("name");
        std::string name = name_it != r.attributes.end() && name_it->is_string()
                               ? name_it->get<std::string>()
                               : "";
        if (!unmanaged.name_prefixes.empty() &&
            std::none_of(unmanaged.name_prefixes.begin(), unmanaged.name_prefixes.end(),
                         [&](const std::string& p) { return name.rfind(p, 0) == 0; })) {
          continue;
        }
        report.items.push_back({DriftItem::Type::kUnmanaged, "", kind, r.id, name, {}});
      }
    }
  }
  return report;
}

}  // namespace cairn
