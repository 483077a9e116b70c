// Drift: the live API against what Cairn last applied (the state), for
// operators: fields changed outside Cairn, resources deleted outside Cairn,
// resources the API reports failed (live status "failed"), and (on request)
// live resources of the managed kinds that no state tracks. Other computed
// attributes (ipv4...) and statuses are never drift.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/plan/plan.h"
#include "engine/plan/refresh.h"

namespace cairn {

struct DriftItem {
  enum class Type { kChanged, kDeleted, kUnmanaged, kFailed };
  Type type = Type::kChanged;
  std::string address;  // empty for unmanaged
  std::string kind;
  std::string id;
  std::string name;                      // unmanaged: the live name
  std::vector<AttributeChange> changes;  // before = state, after = live
  std::string reason;                    // failed: the state's taint, if recorded
};

struct DriftReport {
  static constexpr int kFormatVersion = 1;
  std::vector<DriftItem> items;
  bool has_drift() const { return !items.empty(); }
};

// Which live resources count as unmanaged. A live resource of a listed kind
// is unmanaged when this stack's state does not track it, no state in
// `managed_elsewhere` does (other stacks sharing the project), and its name
// starts with one of `name_prefixes` (when any is given).
struct UnmanagedScope {
  bool enabled = false;
  std::vector<std::string> name_prefixes;
  std::set<std::string> managed_elsewhere;  // "kind/canonical id"
};

DriftReport DetectDrift(const StateSnapshot& state, const RefreshResult& refresh,
                        const KindCatalog& kinds, const UnmanagedScope& unmanaged,
                        const std::function<std::string(const std::string&)>& canonical_id);

// Rendering for people and tools: engine/report/drift_report.h.

}  // namespace cairn
