#include "engine/drift/drift.h"

#include <algorithm>
#include <set>

namespace cairn {

const char* DriftTypeName(DriftItem::Type type) {
  switch (type) {
    case DriftItem::Type::kChanged:
      return "changed";
    case DriftItem::Type::kDeleted:
      return "deleted";
    case DriftItem::Type::kUnmanaged:
      return "unmanaged";
    case DriftItem::Type::kFailed:
      return "failed";
  }
  return "changed";
}
bool DriftReport::has_drift() const {
  return std::any_of(items.begin(), items.end(), [](const DriftItem& i) { return i.counts(); });
}

IgnoredFields IgnoredFieldsOf(const StackConfig& config) {
  IgnoredFields out;
  for (const ResourceConfig& rc : config.resources) {
    if (rc.lifecycle.ignore_changes.empty()) continue;
    auto& fields = out[rc.address.ToString()];
    fields.insert(rc.lifecycle.ignore_changes.begin(), rc.lifecycle.ignore_changes.end());
  }
  return out;
}

DriftReport DetectDrift(const StateSnapshot& state, const RefreshResult& refresh,
                        const KindCatalog& kinds, const UnmanagedScope& unmanaged,
                        const IgnoredFields& ignored) {
  DriftReport report;
  std::set<std::string> tracked;  // kind/canonical id, for unmanaged
  auto canon = [&](const std::string& id) { return CanonicalId(kinds, id); };
  static const Value kAbsent(nullptr);
  // Both by address: the live view is walked along the state.
  auto lv = refresh.live.begin();
  for (const auto& [addr, rs] : state.resources) {
    if (unmanaged.enabled) tracked.insert(rs.kind + "/" + canon(rs.id));
    while (lv != refresh.live.end() && lv->first < addr) ++lv;
    // Not refreshed: its listing failed.
    if (lv == refresh.live.end() || lv->first != addr) continue;
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
      auto found = live.find(field);
      const Value& after = found != live.end() ? *found : kAbsent;
      if (SameFieldValue(kinds, before, after, info && info->references.count(field))) continue;
      item.changes.push_back({field, before, after, info && info->immutable.count(field) > 0});
    }
    if (!item.changes.empty()) report.items.push_back(std::move(item));
  }
  if (unmanaged.enabled) {
    for (const auto& [kind, resources] : refresh.listed) {
      for (const auto& r : resources) {
        std::string key = kind + "/" + canon(r.id);
        if (tracked.count(key) || unmanaged.managed_elsewhere.count(key) ||
            unmanaged.read_as_data.count(key)) {
          continue;
        }
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
  SetIgnoredFields(report, ignored);
  return report;
}

void SetIgnoredFields(DriftReport& report, const IgnoredFields& ignored) {
  if (ignored.empty()) return;
  for (DriftItem& item : report.items) {
    if (item.type != DriftItem::Type::kChanged) continue;
    auto here = ignored.find(item.address);
    if (here == ignored.end()) continue;
    std::vector<AttributeChange> kept;
    for (AttributeChange& change : item.changes) {
      (here->second.count(change.field) ? item.ignored : kept).push_back(std::move(change));
    }
    item.changes = std::move(kept);
  }
}

StateCommit RecordLiveValues(const StateSnapshot& state, const RefreshResult& refresh,
                             const KindCatalog& kinds) {
  StateCommit commit;
  for (const auto& [addr, rs] : state.resources) {
    auto lv = refresh.live.find(addr);
    if (lv == refresh.live.end()) continue;  // not refreshed
    if (!lv->second) {
      commit.remove.push_back(addr);
      continue;
    }
    const KindInfo* info = kinds.count(rs.kind) ? &kinds.at(rs.kind) : nullptr;
    // Only what drift shows: a resource whose computed attributes alone
    // moved (its status, an address) is left as recorded.
    const Value& live_value = *lv->second;
    bool differs = false;
    for (const auto& [field, before] : rs.attributes.items()) {
      if (field == "id" || (info && info->computed.count(field))) continue;
      Value after = live_value.contains(field) ? live_value.at(field) : Value(nullptr);
      differs =
          differs || !SameFieldValue(kinds, before, after, info && info->references.count(field));
    }
    if (!differs) continue;
    Value attributes = Value::object();
    for (const auto& [field, live] : lv->second->items()) {
      auto recorded = rs.attributes.find(field);
      const bool keep =
          recorded != rs.attributes.end() &&
          SameFieldValue(kinds, *recorded, live, info && info->references.count(field));
      attributes[field] = keep ? *recorded : live;
    }
    attributes["id"] = rs.id;  // the state's spelling of its own id
    ResourceState updated = rs;
    updated.attributes = std::move(attributes);
    commit.put.push_back(std::move(updated));
  }
  return commit;
}

}  // namespace cairn
