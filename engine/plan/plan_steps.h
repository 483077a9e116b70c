// The steps MakePlan (plan.h) is made of, each a function over values that
// can be read, changed and tested alone, in the spirit of Terraform's graph
// transformers. MakePlan runs them in this order (docs/architecture.md):
//
//   1. moves            `moved` documents applied to the state (plan.cc)
//   2. --replace        ForcedReplacements: the addresses to replace
//   3. per resource     DiffFields (what changes), ReplacementReason and
//                       TriggerIndex (why it must be replaced), the
//                       lifecycle rules (ShrinkRefusals, PreventDestroy*),
//                       DecideConditions (what the plan can decide now)
//   4. deletes          PlanDeletes: what the state holds and the manifests
//                       no longer do, dependents first (one topological
//                       order for the engine: engine/graph/topological_order.h)
//   5. targets          SelectTargets: --target and what it brings in;
//                       ExcludeTargets: --exclude and what it holds back
//   6. outputs, checks  PlanOutputs, PlanChecks
//   7. pending          the journal's unfinished operations (plan.cc)
//
// None of them calls the API or reads a file: they take what the plan knows
// (the manifests, the state, the live view, the values planned so far) and
// return what they decide.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/expr.h"
#include "engine/plan/plan.h"

namespace cairn::plan {

// What the plan refuses (failed conditions, prevent_destroy), by the
// address whose change it concerns: --target keeps only its own.
using Refusals = std::vector<std::pair<std::string, Diagnostic>>;

// The values each resource (and data source) will have once the plan is
// applied, by address, for the references of those planned after it. A
// value the plan leaves as the state or the API has it is borrowed from
// there (the state and live view MakePlan reads outlive these), not
// copied: at 100,000 unchanged resources, copying and freeing them was
// nearly a third of making the plan.
class PlannedValues {
 public:
  void Reserve(size_t n) { values_.reserve(n); }
  // Makes room for `address`, planned nothing yet. Once every address has
  // its room, Own and Borrow of one address and Find of another may run on
  // different threads at once.
  void Prepare(const std::string& address) { values_.try_emplace(address); }
  // Holds `value` for `address`, in place of anything held before.
  void Own(const std::string& address, Value value);
  // Refers to `value` for `address`; `value` must outlive this.
  void Borrow(const std::string& address, const Value& value);
  void Erase(const std::string& address) { values_.erase(address); }
  // nullptr when nothing is planned at `address`.
  const Value* Find(const std::string& address) const;

 private:
  struct Slot {
    Value owned;
    const Value* borrowed = nullptr;
    bool planned = false;
  };
  Slot& SlotOf(const std::string& address);
  std::unordered_map<std::string, Slot> values_;
};

// A planned resource's values: what its spec resolves to, with every
// computed attribute unknown (a create or a replace).
Value PlannedNew(const Value& resolved, const KindInfo& info);

// The fields a create sets, for the plan to show: each spec field (not the
// computed ones) from nothing to its value, "(known after apply)" where it
// depends on something not made yet.
std::vector<AttributeChange> CreatedFields(const Value& resolved, const KindInfo& info);

// A residual that failed once its references were known (expr.h,
// ResolveError), as an error at `at` naming whose value it is ("instance.web:
// rules[0]: ..."), sensitive variables' values masked.
Diagnostic ResolveFailure(const std::string& what, const ResolveError& e,
                          const std::vector<std::string>& secrets, const SourceLocation& at);

// --replace: the desired addresses each of `replace` names (an address,
// every instance of a base address, or everything in a module). One that
// names nothing is an unknown_target error in `diags`.
std::set<std::string> ForcedReplacements(const StackConfig& config,
                                         const std::vector<std::string>& replace,
                                         std::vector<Diagnostic>& diags);

// The fields of `resolved` (a spec, residuals resolved) that differ from
// `current` (the live or recorded object), as changes; computed fields and
// lifecycle.ignore_changes left out, references compared by canonical id.
// A field that is unknown yet always counts as a change. The immutable ones
// among them are also named in `replace_fields`.
std::vector<AttributeChange> DiffFields(const Value& resolved, const Value& current,
                                        const ResourceConfig& rc, const KindInfo& info,
                                        const KindCatalog& kinds,
                                        std::vector<std::string>& replace_fields);

// Why a resource must be replaced whatever its fields say, or "": it is
// tainted (its last provisioning failed), the API reports it failed
// (`refreshed`: `current` is the live object), or `forced` (--replace names
// it, and no field forces the replacement already).
std::string ReplacementReason(const ResourceState& recorded, const Value& current, bool refreshed,
                              bool forced);

// lifecycle.replace_triggered_by: the changes planned so far, by base
// address, and whether one of them triggers the replacement of a resource.
// A trigger is a dependency, so its changes are planned before the
// resource's.
class TriggerIndex {
 public:
  // Whether any resource of `config` names a trigger (else nothing is kept).
  explicit TriggerIndex(const StackConfig& config);
  bool enabled() const { return enabled_; }
  // The change at `index` of `changes` is that of a resource of `base`.
  void Record(const std::string& base, size_t index);
  // Why one of rc's triggers replaces it ("replace_triggered_by
  // network.core: it is updated"), or "".
  std::string Reason(const ResourceConfig& rc, const std::vector<PlannedChange>& changes) const;

 private:
  bool enabled_ = false;
  std::map<std::string, std::vector<size_t>> changes_of_base_;
};

// A grow-only field (a volume's size) the API refuses to lower: a
// cannot_shrink error per field that `ch` lowers.
std::vector<Diagnostic> ShrinkRefusals(const PlannedChange& ch, const KindInfo& info,
                                       const ResourceConfig& rc);

// lifecycle.prevent_destroy on a resource the plan must replace: the
// refusal, at the field that forces it (else the resource).
Diagnostic PreventDestroyOnReplace(const PlannedChange& ch, const ResourceConfig& rc);

// The conditions of a resource's change as far as the plan can decide them.
// A failed one is a refusal (an error); one it cannot decide stays in the
// change for apply. A change with no action applies nothing, so its
// undecided conditions are warnings (condition_not_checked) instead.
// `self` is the resource as planned.
// Preconditions are decided first (DecidePreconditions: with what the
// resources it reads will be), postconditions once the change's values are
// planned (DecidePostconditions).
void DecidePreconditions(const ResourceConfig& rc, PlannedChange& ch, const AttributeLookup& lookup,
                         const std::vector<std::string>& secrets, Refusals& refusals);
void DecidePostconditions(const ResourceConfig& rc, PlannedChange& ch,
                          const AttributeLookup& lookup, const Value& self,
                          const std::vector<std::string>& secrets, Refusals& refusals);

// The deletes: everything `state` holds that `desired` does not (or
// everything, for a destroy), ordered so that a resource is deleted after
// everything in state that depends on it (ties by address). A destroy of a
// resource with prevent_destroy is a refusal, by address.
std::vector<PlannedChange> PlanDeletes(const StackConfig& config, const StateSnapshot& state,
                                       const LiveView& live,
                                       const std::unordered_set<std::string>& desired,
                                       const PlanOptions& options, Refusals& refusals);

// Which changes --target keeps:
//   - a target without an index selects every instance of the resource;
//   - a create, update or replace brings in what it depends on (it cannot
//     be made without them), transitively;
//   - a delete brings in everything that depends on the object deleted
//     (recorded in the state, or desired), which must go or let go first:
//     destroying a target never deletes what the target depends on.
// A target that is not an address, or names nothing in the manifests or
// the state, is an error naming it (with a suggestion): silently planning
// nothing would read as "no changes".
// `forgotten`: what the plan forgets (kind: removed), which a target may
// name though it is no longer in `state`.
std::set<std::string> SelectTargets(const std::vector<PlannedChange>& changes,
                                    const StackConfig& config, const StateSnapshot& state,
                                    const std::vector<std::string>& targets,
                                    std::vector<Diagnostic>& diags,
                                    const std::vector<ResourceAddress>& forgotten = {});

// The changes --exclude holds back (OpenTofu's -exclude): those its patterns
// name, and what cannot be done without them:
//   - a create or update held back holds back every create or update that
//     depends on it;
//   - a delete held back holds back the deletes of what it depends on,
//     which must outlive it.
// A pattern that is not one, or names nothing, is an error as for targets.
std::set<std::string> ExcludeTargets(const std::vector<PlannedChange>& changes,
                                     const StackConfig& config, const StateSnapshot& state,
                                     const std::vector<std::string>& excludes,
                                     std::vector<Diagnostic>& diags,
                                     const std::vector<ResourceAddress>& forgotten = {});

// The outputs the plan records (with their preconditions decided as far as
// they can be; a targeted destroy keeps those that still resolve once its
// deletes are made: `planned` loses them) and how each changes against the
// state (`output_changes`). A residual that fails is an error at the output.
void PlanOutputs(const StackConfig& config, const StateSnapshot& state, const PlanOptions& options,
                 PlannedValues& planned, const AttributeLookup& lookup,
                 const std::vector<std::string>& secrets, Plan& plan,
                 std::vector<Diagnostic>& diags);

// The `check` documents, decided as far as the plan can: a failing
// assertion is a warning (check_failed); undecided ones go to Plan::checks
// for apply's end. One CheckResult per check.
void PlanChecks(const StackConfig& config, const AttributeLookup& lookup,
                const std::vector<std::string>& secrets, Plan& plan,
                std::vector<Diagnostic>& diags);

}  // namespace cairn::plan
