// One run of `cairn watch` over one stack: the live resources read by list
// (one refresh), the drift found in them, the plan against them, and the
// stack's checks decided with the live values. Reads only. Whether the
// plan may be applied unattended (remediation) is JudgeRemediation's call.
#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/drift/drift.h"
#include "engine/manifest/config.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

struct WatchRunOptions {
  // Also live resources of the managed kinds that no state tracks (as
  // `cairn drift --unmanaged`).
  UnmanagedScope unmanaged;
  std::stop_token stop;
};

struct WatchRun {
  DriftReport drift;
  // The stack's `check` documents, then each resource's preconditions and
  // postconditions that fail (one result each, named "ADDRESS:
  // postcondition"), all decided with the values as they are now: the
  // live ones (as the state recorded what refresh did not read), not the
  // plan's, which would put drift back.
  std::vector<CheckResult> checks;
  // The plan against the live resources: what an apply would do now.
  Plan plan;
  // The plan's errors (a condition false with the planned values among
  // them): with any, nothing may be applied.
  std::vector<Diagnostic> plan_diagnostics;
  // Why the run failed (the API could not be read): no drift, no checks.
  std::vector<Diagnostic> diagnostics;
  int requests = 0;  // of the refresh
  bool ok() const { return !HasErrors(diagnostics); }
};

WatchRun RunWatch(const StackConfig& config, const StateSnapshot& state, Provider& provider,
                  const KindCatalog& kinds, const WatchRunOptions& options);

// Whether `run`'s plan may be applied by `cairn watch --remediate`: only
// when it holds nothing but updates of resources that drifted, each
// changing only fields that drifted (putting them back), and nothing else:
// no create, replace or delete, no move, import or forget, no output
// change, no operation left in the journal, no error. "" when it may;
// else why not, in a sentence naming the address. Nothing to put back is
// "" too (with no update in the plan).
std::string JudgeRemediation(const WatchRun& run);

// The updates `run`'s plan holds (what a remediation applies).
int PlannedUpdates(const Plan& plan);

}  // namespace cairn
