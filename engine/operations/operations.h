// Operations: whole steps of the engine that commands run over a loaded
// stack, a state snapshot and a provider: the planning facts of the kinds,
// planning a stack (refresh, data sources, plan), finding its drift and
// recording the live values (refresh-only). Import has its own header
// (import.h), as have saved plans and state checks. The CLI parses flags, opens what these need and
// prints what they return; what happens in between is here, tested with the FakeProvider
// (tests/engine/operations).
#pragma once

#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/address.h"
#include "engine/drift/drift.h"
#include "engine/manifest/config.h"
#include "engine/plan/plan.h"
#include "engine/plan/refresh.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

class SchemaRegistry;

// What the planner needs to know of every kind, from its schema: immutable,
// grow-only and computed fields, and the fields that refer to other kinds.
KindCatalog KindCatalogFrom(const SchemaRegistry& registry);

// The write-only values `config`'s resources set, by their placeholder
// (engine/apply/write_only.h), for ApplyOptions::write_only_values: those
// known once the manifests load (one that waits for a resource cannot be
// told again; recovering its operation is refused, saying so).
std::map<std::string, Value> WriteOnlyValues(const StackConfig& config, const KindCatalog& kinds);

// Refreshes the state's resources through `provider` (unless
// options.refresh is false), reads the stack's data sources (always, unless
// options.destroy: the plan resolves references to them; not those whose
// values options.data gives already, as `cairn test`'s overrides do),
// reads the objects its `kind: import` documents adopt that the state does
// not track yet (import.h: ReadImports; not for a destroy), and plans. Refresh
// and data-source problems come back as the result's diagnostics, with no
// plan made. `provider` may be null when neither is needed (no refresh, no
// data source, no import to read, or a destroy): a command run without an API; if one is
// needed all the same, that is an internal error, never a null call.
PlanResult PlanStack(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                     const KindCatalog& kinds, const PlanOptions& options,
                     std::stop_token stop = {});

// What plan, apply and destroy ask of a plan: their flags, and where the
// stack is.
struct StackPlanRequest {
  bool refresh = true;                // --refresh (false: the state as recorded)
  bool destroy = false;               // destroy, plan --destroy
  std::vector<std::string> targets;   // --target
  std::vector<std::string> excludes;  // --exclude
  std::vector<std::string> replace;   // --replace
  // The journal's entries, which the plan shows as what apply completes
  // first (plan only: apply and destroy plan after completing them).
  std::vector<JournalEntry> pending;
  // The stack directory, absolute: recorded in the plan (Plan::stack), a
  // saved plan's "where it was made".
  std::string stack_dir;
  // What the plan read from the API is left to the process's end
  // (base/discard.h): for a command that ends once it has planned.
  bool discard_at_exit = false;
  // With refresh: the refresh of the very state planned, made already
  // (`cairn plan` makes it while the manifests load), taken (moved from)
  // instead of refreshing again.
  RefreshResult* refreshed = nullptr;
};

// PlanStack with a command's request: the plan `cairn plan` shows and
// saves, and the one apply and destroy carry out.
PlanResult PlanStack(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                     const KindCatalog& kinds, const StackPlanRequest& request,
                     std::stop_token stop = {});

struct StackDriftOptions {
  // List the live resources no state tracks (drift --unmanaged); the stack's
  // data sources are read then, since the objects they read are not.
  UnmanagedScope unmanaged;
};

struct StackDrift {
  DriftReport report;
  std::vector<Diagnostic> diagnostics;  // refresh and data-source problems: no report
  bool ok() const { return !HasErrors(diagnostics); }
};

// The stack's drift (`cairn drift`): its state refreshed through `provider`
// and compared with what the state recorded, the fields the manifests'
// lifecycle.ignore_changes names listed apart and not counted. Reads only.
StackDrift DetectStackDrift(const StackConfig& config, const StateSnapshot& state,
                            Provider& provider, const KindCatalog& kinds,
                            const StackDriftOptions& options, std::stop_token stop = {});

// DetectStackDrift of the state alone, without --unmanaged and without the
// manifests' ignore_changes (every difference in `changes`): what `cairn
// drift` detects while the manifests still load, needing only the state and
// the API; SetIgnoredFields (engine/drift/drift.h) with the loaded stack's
// IgnoredFieldsOf then makes it DetectStackDrift's.
StackDrift DetectStateDrift(const StateSnapshot& state, Provider& provider,
                            const KindCatalog& kinds, std::stop_token stop = {});

// A refresh-only plan (`cairn apply --refresh-only`): what differs between
// the state and the live resources (ignored fields included: recording them
// is what clears their drift), and the commit that records the live values.
// Nothing is sent but reads; applying it is committing `commit`.
struct RefreshOnlyPlan {
  DriftReport report;
  StateCommit commit;  // RecordLiveValues: empty when the state holds the live values
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics); }
  bool has_changes() const { return !commit.put.empty() || !commit.remove.empty(); }
};
RefreshOnlyPlan PlanRefreshOnly(const StateSnapshot& state, Provider& provider,
                                const KindCatalog& kinds, std::stop_token stop = {});

}  // namespace cairn
