// Drift: the live API against what Cairn last applied (the state), for
// operators: fields changed outside Cairn, resources deleted outside Cairn,
// resources the API reports failed (live status "failed"), and (on request)
// live resources of the managed kinds that no state tracks. Other computed
// attributes (ipv4...) and statuses are never drift. A field the manifests'
// lifecycle.ignore_changes names is listed apart (`ignored`) and never
// counts: the plan leaves it alone, so it would be reported on every run.
// The objects the stack reads through `kind: data` are known to it, never
// unmanaged.
//
// RecordLiveValues turns what refresh found into a state commit that takes
// the live values in (`cairn apply --refresh-only`): no API call is made.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/manifest/config.h"
#include "engine/plan/plan.h"
#include "engine/plan/refresh.h"
#include "engine/state/state_store.h"

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
  // Changed: differences in fields lifecycle.ignore_changes names. Shown,
  // never counted: an item with only these is no drift.
  std::vector<AttributeChange> ignored;

  // Whether this item is drift (anything but ignored differences alone).
  bool counts() const { return type != Type::kChanged || !changes.empty(); }
};

// "changed", "deleted", "unmanaged" or "failed": the type's name in
// reports, events and metrics.
const char* DriftTypeName(DriftItem::Type type);

struct DriftReport {
  static constexpr int kFormatVersion = 1;
  std::vector<DriftItem> items;
  bool has_drift() const;
};

// Which live resources count as unmanaged. A live resource of a listed kind
// is unmanaged when this stack's state does not track it, no state in
// `managed_elsewhere` does (other stacks sharing the project), and its name
// starts with one of `name_prefixes` (when any is given).
struct UnmanagedScope {
  bool enabled = false;
  std::vector<std::string> name_prefixes;
  std::set<std::string> managed_elsewhere;  // "kind/canonical id"
  // Read by this stack's data sources ("kind/canonical id"): known to the
  // stack, so never unmanaged.
  std::set<std::string> read_as_data;
};

// State address -> the fields the manifests' lifecycle.ignore_changes names
// for the resource there.
using IgnoredFields = std::map<std::string, std::set<std::string>>;
IgnoredFields IgnoredFieldsOf(const StackConfig& config);

DriftReport DetectDrift(const StateSnapshot& state, const RefreshResult& refresh,
                        const KindCatalog& kinds, const UnmanagedScope& unmanaged,
                        const IgnoredFields& ignored = {});

// Moves the changes of fields `ignored` names, for their resources, from
// each changed item's `changes` to its `ignored` (in the order they were
// in): what DetectDrift does with its `ignored`, for a report made without
// (cairn drift detects while the manifests that name them still load).
void SetIgnoredFields(DriftReport& report, const IgnoredFields& ignored);

// The state commit that records what refresh found, for every resource
// drift reports: a resource deleted outside Cairn is removed, one changed
// outside Cairn takes its live values (every field refresh saw, computed
// ones included; the id and reference fields that name the same object keep
// the state's spelling). One whose computed attributes alone moved is left
// as recorded. Empty (nothing put or removed) when the state already
// holds the live values. `report` is DetectDrift's for the same refresh,
// without ignored fields: everything that differs is recorded.
StateCommit RecordLiveValues(const StateSnapshot& state, const RefreshResult& refresh,
                             const KindCatalog& kinds);

// Rendering for people and tools: engine/report/drift_report.h.

}  // namespace cairn
