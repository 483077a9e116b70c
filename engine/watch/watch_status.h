// What `cairn watch` keeps of a stack between runs, and what it tells the
// world when that changes: the latest run's record, the stack's status
// (ok, drifted, checks failing, error), the events between two runs
// (drift_detected, drift_resolved, check_failed, check_recovered,
// run_failed, run_recovered, remediation_applied|refused|failed) and the JSON of the status
// document (docs/watch.md). Values are as the run found them; the caller redacts what it prints
// (base/redact.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/value.h"
#include "engine/drift/drift.h"
#include "engine/plan/plan.h"

namespace cairn {

struct WatchedStackInfo {
  std::string name;  // unique among the watched stacks
  std::string dir;
  std::string workspace;
};

// A resource the state tracks, for the status page's per-resource view.
struct TrackedResource {
  std::string address, kind, id;
};

// The decision on the last drift a run found (`--remediate`).
struct RemediationRecord {
  int64_t at_ms = 0;   // Unix time
  std::string result;  // "applied", "refused", "failed"
  std::string reason;  // refused, failed: why
  int updated = 0;     // applied: the resources updated
};

struct StackRunRecord {
  int64_t started_ms = 0, finished_ms = 0;  // Unix time
  int requests = 0;                         // API requests the run made
  std::string error;                        // non-empty: the run failed, and why
  DriftReport drift;
  std::vector<CheckResult> checks;
  std::vector<TrackedResource> resources;
  std::optional<RemediationRecord> remediation;  // this run's, if any was considered

  bool failed() const { return !error.empty(); }
  // Drift items that count (DriftItem::counts), by type.
  int Drifted(DriftItem::Type type) const;
  int FailingChecks() const;
};

// "error", "drifted", "checks_failing" or "ok".
std::string StackStatusName(const StackRunRecord& run);

// The events between `previous` (the stack's run before, null for the
// first) and `last_ok` (the last run that did not fail, null for none), and
// `now`. Each is a JSON object: {"event", "at", "stack", "dir",
// "workspace", ...what it is about}. Drift is detected when a resource
// drifts that did not at the last good run, resolved when none drifts any
// more; a check fails when it was not failing, recovers when it no longer
// fails; a run fails when the one before did not (or is the first), and
// recovers after one that failed. A remediation applied or failed is an
// event each time; one refused, only when the reason is new.
std::vector<Value> WatchEvents(const WatchedStackInfo& stack, const StackRunRecord* previous,
                               const StackRunRecord* last_ok, const StackRunRecord& now);

// The run's part of a stack's status document: "last_run", "status",
// "drift" (counts), "checks", "resources", "unmanaged", "remediation".
// For a failed run, drift and checks are those of `last_ok` (what is known).
void RunRecordToJson(const StackRunRecord& now, const StackRunRecord* last_ok, Value& out);

// RFC 3339 UTC with milliseconds dropped, of a Unix time in milliseconds.
std::string WatchTime(int64_t unix_ms);

}  // namespace cairn
