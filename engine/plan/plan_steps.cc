#include "engine/plan/plan_steps.h"

#include <algorithm>

#include "base/schema/suggest.h"
#include "engine/address_pattern.h"
#include "engine/graph/topological_order.h"
#include "engine/manifest/expr.h"
#include "engine/plan/conditions.h"

namespace cairn::plan {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A condition (a precondition, an output's precondition, a check's
// assertion) as far as the plan knows its values: nullopt when it holds or
// is not known yet, else the diagnostic saying why it failed. `what` says
// whose it is ("network.a: precondition").
std::optional<Diagnostic> FailedCondition(const ConditionConfig& c, const AttributeLookup& lookup,
                                          Severity severity, const std::string& code,
                                          const std::string& what,
                                          const std::vector<std::string>& secrets,
                                          const Value* self = nullptr) {
  ConditionVerdict v = DecideCondition(c, lookup, self, secrets);
  switch (v.kind) {
    case ConditionVerdict::Kind::kHolds:
    case ConditionVerdict::Kind::kUnknown:
      return std::nullopt;
    case ConditionVerdict::Kind::kInvalid:
      return Diagnostic{Severity::kError, "invalid_condition", what + ": " + v.message, "",
                        c.location};
    case ConditionVerdict::Kind::kFails:
      break;
  }
  return Diagnostic{severity, code, what + " failed: " + v.message, "", c.location};
}

// A condition of a resource with no change that the plan cannot decide:
// apply does not act on the resource, so nothing checks it this time.
Diagnostic UncheckedCondition(const ConditionConfig& c, const std::string& what) {
  return Diagnostic{Severity::kWarning, "condition_not_checked",
                    what +
                        " is not checked: it reads values not known yet, and the resource has "
                        "no change to apply",
                    "the next plan checks it once they are known", c.location};
}

bool KnownCondition(const ConditionConfig& c, const AttributeLookup& lookup,
                    const Value* self = nullptr) {
  return !ContainsUnknown(ResolveReferences(c.condition, lookup, self));
}

}  // namespace

PlannedValues::Slot& PlannedValues::SlotOf(const std::string& address) {
  // find, not operator[]: no change to the map itself once Prepared.
  auto it = values_.find(address);
  if (it == values_.end()) it = values_.try_emplace(address).first;
  return it->second;
}

void PlannedValues::Own(const std::string& address, Value value) {
  Slot& slot = SlotOf(address);
  slot.owned = std::move(value);
  slot.borrowed = nullptr;
  slot.planned = true;
}

void PlannedValues::Borrow(const std::string& address, const Value& value) {
  Slot& slot = SlotOf(address);
  slot.owned = nullptr;
  slot.borrowed = &value;
  slot.planned = true;
}

const Value* PlannedValues::Find(const std::string& address) const {
  auto it = values_.find(address);
  if (it == values_.end() || !it->second.planned) return nullptr;
  return it->second.borrowed ? it->second.borrowed : &it->second.owned;
}

Value PlannedNew(const Value& resolved, const KindInfo& info) {
  Value v = resolved.is_object() ? resolved : Value::object();
  for (const auto& c : info.computed) v[c] = UnknownValue();
  return v;
}

std::vector<AttributeChange> CreatedFields(const Value& resolved, const KindInfo& info) {
  std::vector<AttributeChange> out;
  if (!resolved.is_object()) return out;
  for (const auto& [field, after] : resolved.items()) {
    if (info.computed.count(field)) continue;
    out.push_back({field, nullptr, ContainsUnknown(after) ? UnknownValue() : after, false});
  }
  return out;
}

namespace {

// The changes each of `patterns` names, `flag`'s (--target, --exclude): an
// error for one that is not an address or pattern, or that names nothing the
// manifests or the state know.
std::vector<std::string> NamedChanges(const std::vector<PlannedChange>& changes,
                                      const StackConfig& config, const StateSnapshot& state,
                                      const std::vector<std::string>& patterns,
                                      const std::string& flag, std::vector<Diagnostic>& diags,
                                      const std::vector<ResourceAddress>& forgotten) {
  // Every address the stack knows, to tell "nothing to do" from "no such".
  std::vector<ResourceAddress> known;
  for (const auto& r : config.resources) known.push_back(r.address);
  for (const auto& [addr, rs] : state.resources) {
    if (auto parsed = StateKey::Parse(addr)) known.push_back(std::move(parsed->resource));
  }
  known.insert(known.end(), forgotten.begin(), forgotten.end());
  std::vector<std::string> named;
  for (const std::string& text : patterns) {
    auto pattern = AddressPattern::Parse(text);
    if (!pattern) {
      diags.push_back({Severity::kError,
                       "invalid_target",
                       flag + " \"" + text + "\" is not a resource address",
                       "addresses look like KIND.NAME, KIND.NAME[2], KIND.NAME[\"key\"] or "
                       "module.NAME (everything in a module), and [*] stands for any index "
                       "(instance.web[*], module.app[*].network.main); `cairn state list` and "
                       "`cairn graph` show them",
                       {}});
      continue;
    }
    if (std::none_of(known.begin(), known.end(),
                     [&](const ResourceAddress& a) { return pattern->Matches(a); })) {
      std::vector<std::string> candidates;
      for (const ResourceAddress& a : known) {
        candidates.push_back(a.ToString());
        candidates.push_back(a.BaseString());
      }
      std::string hint = DidYouMean(text, candidates);
      diags.push_back(
          {Severity::kError,
           "unknown_target",
           flag + " \"" + text + "\" matches no resource in the manifests or the state",
           hint.empty() ? "`cairn state list` and `cairn graph` show the addresses" : hint,
           {}});
      continue;
    }
    // An address takes the objects its resources deposed too.
    for (const auto& c : changes) {
      if (pattern->Matches(c.parsed_address)) named.push_back(c.address);
    }
  }
  return named;
}

}  // namespace

std::set<std::string> SelectTargets(const std::vector<PlannedChange>& changes,
                                    const StackConfig& config, const StateSnapshot& state,
                                    const std::vector<std::string>& targets,
                                    std::vector<Diagnostic>& diags,
                                    const std::vector<ResourceAddress>& forgotten) {
  std::map<std::string, const PlannedChange*> by_address;
  std::map<std::string, std::vector<std::string>> dependents;
  for (const auto& c : changes) {
    by_address[c.address] = &c;
    for (const auto& d : c.prior_depends_on) dependents[d].push_back(c.address);
    for (const auto& d : c.depends_on) dependents[d].push_back(c.address);
  }
  std::vector<std::string> work =
      NamedChanges(changes, config, state, targets, "--target", diags, forgotten);
  std::set<std::string> selected;
  while (!work.empty()) {
    std::string a = work.back();
    work.pop_back();
    auto it = by_address.find(a);
    if (it == by_address.end() || !selected.insert(a).second) continue;
    const PlannedChange& c = *it->second;
    if (c.action == Action::kDelete) {
      auto deps = dependents.find(a);
      if (deps != dependents.end())
        work.insert(work.end(), deps->second.begin(), deps->second.end());
    } else {
      work.insert(work.end(), c.depends_on.begin(), c.depends_on.end());
    }
  }
  return selected;
}

std::set<std::string> ExcludeTargets(const std::vector<PlannedChange>& changes,
                                     const StackConfig& config, const StateSnapshot& state,
                                     const std::vector<std::string>& excludes,
                                     std::vector<Diagnostic>& diags,
                                     const std::vector<ResourceAddress>& forgotten) {
  std::map<std::string, const PlannedChange*> by_address;
  std::map<std::string, std::vector<std::string>> dependents;  // of a create or update
  for (const auto& c : changes) {
    by_address[c.address] = &c;
    if (c.action == Action::kDelete) continue;
    for (const auto& d : c.depends_on) dependents[d].push_back(c.address);
  }
  std::vector<std::string> work =
      NamedChanges(changes, config, state, excludes, "--exclude", diags, forgotten);
  std::set<std::string> excluded;
  while (!work.empty()) {
    std::string a = work.back();
    work.pop_back();
    auto it = by_address.find(a);
    if (it == by_address.end() || !excluded.insert(a).second) continue;
    const PlannedChange& c = *it->second;
    if (c.action == Action::kDelete) {
      // Kept, it still uses what it depends on: their deletes wait too.
      for (const auto& d : c.prior_depends_on) {
        auto dep = by_address.find(d);
        if (dep != by_address.end() && dep->second->action == Action::kDelete) work.push_back(d);
      }
    } else if (auto deps = dependents.find(a); deps != dependents.end()) {
      // What is made from it cannot be made without it.
      work.insert(work.end(), deps->second.begin(), deps->second.end());
    }
  }
  return excluded;
}

Diagnostic ResolveFailure(const std::string& what, const ResolveError& e,
                          const std::vector<std::string>& secrets, const SourceLocation& at) {
  return {Severity::kError, e.code,
          MaskSecrets(what + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message, secrets),
          MaskSecrets(e.detail, secrets), at};
}

std::set<std::string> ForcedReplacements(const StackConfig& config,
                                         const std::vector<std::string>& replace,
                                         std::vector<Diagnostic>& diags) {
  std::set<std::string> forced;
  for (const auto& want : replace) {
    bool found = false;
    std::optional<std::vector<ModuleStep>> module;
    if (!ResourceAddress::Parse(want)) module = ParseModulePath(want);
    for (const ResourceConfig& rc : config.resources) {
      if (rc.address.ToString() == want || rc.address.BaseString() == want ||
          (module && InModule(rc.address.module, *module))) {
        forced.insert(rc.address.ToString());
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> candidates;
      for (const ResourceConfig& rc : config.resources) candidates.push_back(rc.address.ToString());
      std::string hint = DidYouMean(want, candidates);
      diags.push_back({Severity::kError,
                       "unknown_target",
                       "--replace \"" + want + "\" names no resource in the manifests",
                       hint.empty() ? "`cairn graph` shows the addresses" : hint,
                       {}});
    }
  }
  return forced;
}

std::vector<AttributeChange> DiffFields(const Value& resolved, const Value& current,
                                        const ResourceConfig& rc, const KindInfo& info,
                                        const KindCatalog& kinds,
                                        std::vector<std::string>& replace_fields) {
  std::vector<AttributeChange> changes;
  if (!resolved.is_object()) return changes;
  for (const auto& [field, after] : resolved.items()) {
    if (info.computed.count(field) || Contains(rc.lifecycle.ignore_changes, field)) continue;
    Value before = current.contains(field) ? current.at(field) : Value(nullptr);
    bool unknown = ContainsUnknown(after);
    if (!unknown && SameFieldValue(kinds, before, after, info.references.count(field) > 0)) {
      continue;
    }
    AttributeChange ac{field, before, unknown ? UnknownValue() : after,
                       info.immutable.count(field) > 0};
    if (ac.forces_replacement) replace_fields.push_back(field);
    changes.push_back(std::move(ac));
  }
  return changes;
}

std::string ReplacementReason(const ResourceState& recorded, const Value& current, bool refreshed,
                              bool forced) {
  // A resource that failed is replaced whatever its fields say: it exists
  // but cannot be used, and nothing may be built on it.
  if (!recorded.tainted.empty()) return recorded.tainted;
  if (refreshed && current.is_object()) {
    auto status = current.find("status");
    if (status != current.end() && *status == "failed") {
      return "failed: the API reports its status as failed";
    }
  }
  if (forced) return "replacement requested with --replace";
  return "";
}

TriggerIndex::TriggerIndex(const StackConfig& config)
    : enabled_(std::any_of(
          config.resources.begin(), config.resources.end(),
          [](const ResourceConfig& rc) { return !rc.lifecycle.replace_triggered_by.empty(); })) {}

void TriggerIndex::Record(const std::string& base, size_t index) {
  if (enabled_) changes_of_base_[base].push_back(index);
}

std::string TriggerIndex::Reason(const ResourceConfig& rc,
                                 const std::vector<PlannedChange>& changes) const {
  for (const Lifecycle::Trigger& t : rc.lifecycle.replace_triggered_by) {
    auto it = changes_of_base_.find(t.address.BaseString());
    if (it == changes_of_base_.end()) continue;
    const std::string named = t.address.ToString();
    for (size_t i : it->second) {
      const PlannedChange& other = changes[i];
      if (!t.whole && other.address != named) continue;
      if (other.action != Action::kUpdate && other.action != Action::kReplace) continue;
      if (t.attr.empty()) {
        return "replace_triggered_by " + named + ": it is " +
               (other.action == Action::kUpdate ? "updated" : "replaced");
      }
      for (const AttributeChange& ac : other.changes) {
        if (ac.field == t.attr)
          return "replace_triggered_by " + named + "." + t.attr + ": it changes";
      }
    }
  }
  return "";
}

std::vector<Diagnostic> ShrinkRefusals(const PlannedChange& ch, const KindInfo& info,
                                       const ResourceConfig& rc) {
  std::vector<Diagnostic> out;
  for (const AttributeChange& ac : ch.changes) {
    if (!info.grow_only.count(ac.field) || !ac.before.is_number() || !ac.after.is_number() ||
        !(ac.after < ac.before)) {
      continue;
    }
    out.push_back({Severity::kError, "cannot_shrink",
                   ch.address + ": " + ac.field + " cannot shrink from " + ac.before.dump() +
                       " to " + ac.after.dump() + ": the API only lets it grow",
                   "keep it at " + ac.before.dump() +
                       " or more; or replace the resource with a new one (whose data starts "
                       "empty) by planning and applying with --replace '" +
                       ch.address + "'",
                   rc.LocationOf(ac.field)});
  }
  return out;
}

Diagnostic PreventDestroyOnReplace(const PlannedChange& ch, const ResourceConfig& rc) {
  std::string why = ch.replace_fields.empty() ? ch.replace_reason
                                              : ch.replace_fields.front() + " forces replacement";
  return Diagnostic{
      Severity::kError, "prevent_destroy",
      ch.address + " has lifecycle.prevent_destroy set, but the plan must replace it (" + why + ")",
      "Remove prevent_destroy, or change the manifest so that it does not replace it.",
      // The field that forces the replacement, else the resource's name.
      rc.LocationOf(ch.replace_fields.empty() ? "" : ch.replace_fields.front())};
}

void DecidePreconditions(const ResourceConfig& rc, PlannedChange& ch, const AttributeLookup& lookup,
                         const std::vector<std::string>& secrets, Refusals& refusals) {
  for (const ConditionConfig& c : rc.lifecycle.preconditions) {
    if (auto d = FailedCondition(c, lookup, Severity::kError, "precondition_failed",
                                 ch.address + ": precondition", secrets)) {
      refusals.emplace_back(ch.address, std::move(*d));
    } else if (!KnownCondition(c, lookup)) {
      ch.preconditions.push_back(c);
    }
  }
}

void DecidePostconditions(const ResourceConfig& rc, PlannedChange& ch,
                          const AttributeLookup& lookup, const Value& self,
                          const std::vector<std::string>& secrets, Refusals& refusals) {
  const std::string& addr = ch.address;
  for (const ConditionConfig& c : rc.lifecycle.postconditions) {
    if (auto d = FailedCondition(c, lookup, Severity::kError, "postcondition_failed",
                                 addr + ": postcondition", secrets, &self)) {
      refusals.emplace_back(addr, std::move(*d));
    } else if (!KnownCondition(c, lookup, &self)) {
      ch.postconditions.push_back(c);
    }
  }
  if (ch.action != Action::kNoOp) return;
  for (const ConditionConfig& c : ch.preconditions) {
    refusals.emplace_back(addr, UncheckedCondition(c, addr + ": precondition"));
  }
  for (const ConditionConfig& c : ch.postconditions) {
    refusals.emplace_back(addr, UncheckedCondition(c, addr + ": postcondition"));
  }
  ch.preconditions.clear();
  ch.postconditions.clear();
}

std::vector<PlannedChange> PlanDeletes(const StackConfig& config, const StateSnapshot& state,
                                       const LiveView& live,
                                       const std::unordered_set<std::string>& desired,
                                       const PlanOptions& options, Refusals& refusals) {
  std::vector<PlannedChange> deletes;
  for (const auto& [addr, rs] : state.resources) {
    if (!options.destroy && desired.count(addr)) continue;
    PlannedChange ch;
    ch.address = addr;
    std::optional<StateKey> parsed = StateKey::Parse(addr);
    if (parsed) {
      ch.parsed_address = parsed->resource;
      ch.deposed = parsed->deposed;
    }
    ch.kind = rs.kind;
    ch.action = Action::kDelete;
    ch.remote_id = rs.id;
    ch.before = rs.attributes;
    ch.after = nullptr;
    ch.prior_depends_on = rs.depends_on;
    if (options.destroy && parsed && !parsed->deposed) {
      if (const ResourceConfig* rc = config.Find(parsed->resource);
          rc && rc->lifecycle.prevent_destroy) {
        refusals.emplace_back(
            addr, Diagnostic{Severity::kError, "prevent_destroy",
                             addr + " has lifecycle.prevent_destroy set and cannot be destroyed",
                             "Remove prevent_destroy from its manifest to destroy it.",
                             rc->LocationOf("")});
      }
    }
    if (options.refresh) {
      auto lv = live.find(addr);
      if (lv != live.end() && !lv->second) ch.note = "already deleted outside Cairn";
    }
    deletes.push_back(std::move(ch));
  }
  // Reverse dependency order: a resource is deleted after everything in state
  // that depends on it, ties by address for determinism.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < deletes.size(); ++i) index.emplace(deletes[i].address, i);
  std::vector<std::pair<size_t, size_t>> before;
  for (size_t i = 0; i < deletes.size(); ++i) {
    for (const auto& dep : deletes[i].prior_depends_on) {
      if (auto it = index.find(dep); it != index.end()) before.emplace_back(i, it->second);
    }
  }
  auto rank = RanksBy(deletes.size(), [&](size_t a, size_t b) {
    return AddressTextLess(deletes[a].address, deletes[b].address);
  });
  TopologicalOrder sorted = SortTopologically(deletes.size(), before, rank);
  // A cycle in recorded dependencies cannot come from a valid config;
  // those deletes go last, in the state's order, rather than being lost.
  std::vector<PlannedChange> ordered;
  ordered.reserve(deletes.size());
  for (size_t i : sorted.order) ordered.push_back(std::move(deletes[i]));
  for (size_t i : sorted.unplaced) ordered.push_back(std::move(deletes[i]));
  return ordered;
}

void PlanOutputs(const StackConfig& config, const StateSnapshot& state, const PlanOptions& options,
                 PlannedValues& planned, const AttributeLookup& lookup,
                 const std::vector<std::string>& secrets, Plan& plan,
                 std::vector<Diagnostic>& diags) {
  if (!options.destroy) {
    for (const auto& out : config.outputs) {
      plan.outputs.push_back({out.name, out.value, out.sensitive});
      for (const ConditionConfig& c : out.preconditions) {
        if (auto d = FailedCondition(c, lookup, Severity::kError, "precondition_failed",
                                     "output " + out.name + ": precondition", secrets)) {
          diags.push_back(std::move(*d));
        } else if (!KnownCondition(c, lookup)) {
          plan.outputs.back().preconditions.push_back(c);
        }
      }
    }
  } else if (!options.targets.empty() || !options.excludes.empty()) {
    // A targeted destroy (or one with exclusions) keeps every output whose value still resolves
    // once its deletes are made: those that refer to nothing it destroys (nor to anything never
    // made). The others are removed, as a destroy removes all.
    for (const auto& c : plan.changes) {
      if (c.action == Action::kDelete) planned.Erase(c.address);
    }
    for (const auto& out : config.outputs) {
      if (ContainsUnknown(ResolveReferences(out.value, lookup))) continue;
      plan.outputs.push_back({out.name, out.value, out.sensitive});
    }
  }
  // Outputs as the apply will record them, against what the state holds.
  // One that depends on a value known only after apply counts as changing
  // ("(known after apply)"): the plan cannot tell it will not.
  std::set<std::string> declared;
  for (const auto& out : plan.outputs) {
    declared.insert(out.name);
    std::vector<ResolveError> failed;
    Value after = ResolveReferences(out.value, lookup, nullptr, &failed);
    for (const ResolveError& e : failed) {
      SourceLocation at;
      for (const OutputConfig& oc : config.outputs) {
        if (oc.name == out.name) at = oc.location;
      }
      diags.push_back(ResolveFailure("output " + out.name, e, secrets, at));
    }
    if (ContainsUnknown(after)) after = UnknownValue();
    auto recorded = state.outputs.find(out.name);
    if (recorded == state.outputs.end()) {
      plan.output_changes.push_back({out.name, Action::kCreate, nullptr, after, out.sensitive});
    } else if (IsUnknown(after) || recorded->second != after) {
      plan.output_changes.push_back(
          {out.name, Action::kUpdate, recorded->second, after, out.sensitive});
    }
  }
  for (const auto& [name, value] : state.outputs) {
    if (!declared.count(name)) {
      // Recorded as sensitive, it stays so: its last value is not shown.
      plan.output_changes.push_back(
          {name, Action::kDelete, value, nullptr, state.sensitive_outputs.count(name) > 0});
    }
  }
}

void PlanChecks(const StackConfig& config, const AttributeLookup& lookup,
                const std::vector<std::string>& secrets, Plan& plan,
                std::vector<Diagnostic>& diags) {
  for (const CheckConfig& check : config.checks) {
    CheckConfig undecided{check.name, {}, check.location};
    CheckResult outcome{check.name, CheckResult::Status::kPassed, {}};
    for (const ConditionConfig& c : check.asserts) {
      if (auto d = FailedCondition(c, lookup, Severity::kWarning, "check_failed",
                                   "check " + check.name, secrets)) {
        outcome.messages.push_back(d->summary);
        diags.push_back(std::move(*d));
      } else if (!KnownCondition(c, lookup)) {
        undecided.asserts.push_back(c);
      }
    }
    outcome.status = !outcome.messages.empty()    ? CheckResult::Status::kFailed
                     : !undecided.asserts.empty() ? CheckResult::Status::kUnknown
                                                  : CheckResult::Status::kPassed;
    plan.check_results.push_back(std::move(outcome));
    if (!undecided.asserts.empty()) plan.checks.push_back(std::move(undecided));
  }
}

}  // namespace cairn::plan
