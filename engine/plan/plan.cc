#include "engine/plan/plan.h"

#include <algorithm>
#include <functional>
#include <variant>

#include "base/schema/suggest.h"
#include "engine/graph/topological_order.h"
#include "engine/manifest/expr.h"
#include "engine/plan/conditions.h"

namespace cairn {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Desired values plus computed attributes not yet known.
Value PlannedNew(const Value& resolved, const KindInfo& info) {
  Value v = resolved.is_object() ? resolved : Value::object();
  for (const auto& c : info.computed) v[c] = UnknownValue();
  return v;
}

// The fields a create sets, for the plan to show: each spec field (not the
// computed ones) from nothing to its value, "(known after apply)" where it
// depends on something not made yet.
std::vector<AttributeChange> CreatedFields(const Value& resolved, const KindInfo& info) {
  std::vector<AttributeChange> out;
  if (!resolved.is_object()) return out;
  for (const auto& [field, after] : resolved.items()) {
    if (info.computed.count(field)) continue;
    out.push_back({field, nullptr, ContainsUnknown(after) ? UnknownValue() : after, false});
  }
  return out;
}

// The changes `targets` select, as users of every IaC tool expect:
//   - a target without an index selects every instance of the resource;
//   - a create, update or replace brings in what it depends on (it cannot
//     be made without them), transitively;
//   - a delete brings in everything that depends on the object deleted
//     (recorded in the state, or desired), which must go or let go first:
//     destroying a target never deletes what the target depends on.
// A target that is not an address, or names nothing in the manifests or
// the state, is an error naming it (with a suggestion): silently planning
// nothing would read as "no changes".
std::set<std::string> SelectTargets(const std::vector<PlannedChange>& changes,
                                    const StackConfig& config, const StateSnapshot& state,
                                    const std::vector<std::string>& targets,
                                    std::vector<Diagnostic>& diags) {
  std::map<std::string, const PlannedChange*> by_address;
  std::map<std::string, std::vector<std::string>> dependents;
  for (const auto& c : changes) {
    by_address[c.address] = &c;
    for (const auto& d : c.prior_depends_on) dependents[d].push_back(c.address);
    for (const auto& d : c.depends_on) dependents[d].push_back(c.address);
  }
  // Every address the stack knows, to tell "nothing to do" from "no such".
  std::set<std::string> known;
  for (const auto& r : config.resources) {
    known.insert(r.address.ToString());
    known.insert(r.address.BaseString());
  }
  for (const auto& [addr, rs] : state.resources) {
    known.insert(addr);
    if (auto parsed = ParseStateAddress(addr)) {
      known.insert(parsed->ToString());
      known.insert(parsed->BaseString());
    }
  }
  std::vector<std::string> work;
  for (const auto& t : targets) {
    auto parsed = ResourceAddress::Parse(t);
    // A module instance, or every instance of a module: all resources in it.
    if (auto module = ParseModulePath(t); module && !parsed) {
      size_t before = work.size();
      for (const auto& c : changes) {
        if (InModule(c.parsed_address.module, *module)) work.push_back(c.address);
      }
      bool declared =
          std::any_of(config.resources.begin(), config.resources.end(),
                      [&](const auto& r) { return InModule(r.address.module, *module); });
      if (work.size() == before && !declared) {
        diags.push_back({Severity::kError,
                         "unknown_target",
                         "--target \"" + t + "\" matches no resource in the manifests or the state",
                         "`cairn state list` and `cairn graph` show the addresses",
                         {}});
      }
      continue;
    }
    if (!parsed) {
      diags.push_back({Severity::kError,
                       "invalid_target",
                       "--target \"" + t + "\" is not a resource address",
                       "addresses look like KIND.NAME, KIND.NAME[2], KIND.NAME[\"key\"] or "
                       "module.NAME (everything in a module); `cairn state list` and `cairn graph` "
                       "show them",
                       {}});
      continue;
    }
    if (!known.count(t)) {
      std::vector<std::string> candidates(known.begin(), known.end());
      std::string hint = DidYouMean(t, candidates);
      diags.push_back(
          {Severity::kError,
           "unknown_target",
           "--target \"" + t + "\" matches no resource in the manifests or the state",
           hint.empty() ? "`cairn state list` and `cairn graph` show the addresses" : hint,
           {}});
      continue;
    }
    // An address takes the objects its resources deposed too.
    bool whole = std::holds_alternative<std::monostate>(parsed->index);
    for (const auto& c : changes) {
      if (c.parsed_address == *parsed || (whole && c.parsed_address.BaseString() == t)) {
        work.push_back(c.address);
      }
    }
  }
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

}  // namespace

const char* CheckStatusName(CheckResult::Status status) {
  switch (status) {
    case CheckResult::Status::kPassed:
      return "passed";
    case CheckResult::Status::kFailed:
      return "failed";
    case CheckResult::Status::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Value CheckResultsToJson(const std::vector<CheckResult>& results) {
  Value out = Value::array();
  for (const CheckResult& r : results) {
    out.push_back(
        {{"name", r.name}, {"status", CheckStatusName(r.status)}, {"messages", r.messages}});
  }
  return out;
}

Plan::Counts Plan::counts() const {
  Counts c;
  for (const auto& ch : changes) {
    switch (ch.action) {
      case Action::kCreate:
        ++c.add;
        break;
      case Action::kUpdate:
        ++c.change;
        break;
      case Action::kReplace:
        ++c.replace;
        break;
      case Action::kDelete:
        ++c.destroy;
        break;
      case Action::kNoOp:
        ++c.noop;
        break;
    }
  }
  c.move = static_cast<int>(moves.size());
  c.pending = static_cast<int>(pending.size());
  return c;
}

bool Plan::has_changes() const {
  return !output_changes.empty() || !moves.empty() || !pending.empty() ||
         std::any_of(changes.begin(), changes.end(),
                     [](const PlannedChange& c) { return c.action != Action::kNoOp; });
}

namespace {

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

// The plan of `config` against a state whose addresses are the manifests'
// (moves made).
PlanResult PlanMoved(const StackConfig& config, const StateSnapshot& state, const LiveView& live,
                     const KindCatalog& kinds, const PlanOptions& options) {
  PlanResult result;
  Plan& plan = result.plan;
  plan.lineage = state.lineage;
  plan.serial = state.serial;
  plan.destroy = options.destroy;

  // Attributes of every resource as they will be once the plan is applied,
  // so that references from later resources see unknowns where they must;
  // and of the data sources, as read.
  std::map<std::string, Value> planned = options.data;
  plan.data = options.data;
  AttributeLookup lookup = [&](const ResourceAddress& addr,
                               const std::string& attr) -> std::optional<Value> {
    auto it = planned.find(addr.ToString());
    if (it == planned.end()) return std::nullopt;
    if (attr.empty()) return it->second;  // the whole object
    if (it->second.contains(attr)) return it->second.at(attr);
    return Value(nullptr);
  };
  // Residuals (engine/manifest/expr.h) evaluated with what the plan knows.
  const auto resolve = [](const Value& v, const AttributeLookup& l) {
    return ResolveReferences(v, l);
  };

  // prevent_destroy refusals and what conditions say (failed, or not
  // checked), by address: reported only for changes that remain once
  // targets have selected. The values of sensitive variables, masked in
  // condition messages.
  std::vector<std::pair<std::string, Diagnostic>> refusals;
  std::vector<std::string> secrets;
  for (const auto& name : config.sensitive_variables) {
    auto it = config.variables.find(name);
    if (it != config.variables.end() && it->second.is_string()) {
      secrets.push_back(it->second.get<std::string>());
    }
  }

  // --replace: which desired addresses (an address, every instance of a
  // base address, or everything in a module); each must name something.
  std::set<std::string> forced;
  for (const auto& want : options.replace) {
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
      result.diagnostics.push_back({Severity::kError,
                                    "unknown_target",
                                    "--replace \"" + want + "\" names no resource in the manifests",
                                    hint.empty() ? "`cairn graph` shows the addresses" : hint,
                                    {}});
    }
  }

  // lifecycle.replace_triggered_by: the changes planned so far, by base
  // address (kept only when some resource names a trigger). A trigger is a
  // dependency, so its changes are planned before the resource's.
  const bool any_triggers = std::any_of(
      config.resources.begin(), config.resources.end(),
      [](const ResourceConfig& rc) { return !rc.lifecycle.replace_triggered_by.empty(); });
  std::map<std::string, std::vector<size_t>> changes_of_base;
  auto triggered = [&](const ResourceConfig& rc) -> std::string {
    for (const Lifecycle::Trigger& t : rc.lifecycle.replace_triggered_by) {
      auto it = changes_of_base.find(t.address.BaseString());
      if (it == changes_of_base.end()) continue;
      const std::string named = t.address.ToString();
      for (size_t i : it->second) {
        const PlannedChange& other = plan.changes[i];
        if (!t.whole && other.address != named) continue;
        if (other.action != Action::kUpdate && other.action != Action::kReplace) continue;
        if (t.attr.empty()) {
          return "replace_triggered_by " + named + ": it is " +
                 (other.action == Action::kUpdate ? "updated" : "replaced");
        }
        for (const AttributeChange& ac : other.changes) {
          if (ac.field == t.attr) {
            return "replace_triggered_by " + named + "." + t.attr + ": it changes";
          }
        }
      }
    }
    return "";
  };
  std::set<std::string> desired_addresses;
  for (const ResourceConfig& rc : config.resources) {
    const std::string addr = rc.address.ToString();
    desired_addresses.insert(addr);
    auto kind_it = kinds.find(rc.kind);
    if (kind_it == kinds.end()) {
      result.diagnostics.push_back(
          {Severity::kError, "unknown_kind",
           "internal error: no schema for kind \"" + rc.kind + "\", please report", "",
           rc.location});
      continue;
    }
    const KindInfo& info = kind_it->second;
    std::vector<ResolveError> failed;
    Value resolved = ResolveReferences(rc.spec, lookup, nullptr, &failed);
    for (const ResolveError& e : failed) {
      result.diagnostics.push_back(
          {Severity::kError, e.code,
           MaskSecrets(addr + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message, secrets),
           MaskSecrets(e.detail, secrets), rc.location});
    }

    PlannedChange ch;
    ch.address = addr;
    ch.parsed_address = rc.address;
    ch.kind = rc.kind;
    ch.after = rc.spec;
    ch.create_before_destroy = rc.lifecycle.create_before_destroy;
    for (const auto& d : rc.depends_on) ch.depends_on.push_back(d.ToString());

    auto st = state.resources.find(addr);
    if (options.destroy) {
      // Destroy plans only delete. What the state holds keeps its values, so
      // that the outputs a targeted destroy keeps still resolve; what it does
      // not hold is not made, so nothing resolves from it.
      if (st != state.resources.end()) planned[addr] = st->second.attributes;
      continue;
    }
    // Preconditions, with what the resources this one reads will be: a
    // false one ends the plan (it is an error), before any request. Those
    // it cannot decide yet go with the change, for apply.
    for (const ConditionConfig& c : rc.lifecycle.preconditions) {
      if (auto d = FailedCondition(c, lookup, Severity::kError, "precondition_failed",
                                   addr + ": precondition", secrets)) {
        refusals.emplace_back(addr, std::move(*d));
      } else if (!KnownCondition(c, lookup)) {
        ch.preconditions.push_back(c);
      }
    }
    // Postconditions, once the change's values are planned: with `self`
    // as planned, decided when known (a resource with no change: as the
    // API shows it now), else left for apply once it is ready.
    auto finish = [&](PlannedChange& change) {
      if (any_triggers) changes_of_base[rc.address.BaseString()].push_back(plan.changes.size());
      if (rc.lifecycle.postconditions.empty() && change.preconditions.empty()) return;
      const Value& self = planned[addr];
      for (const ConditionConfig& c : rc.lifecycle.postconditions) {
        if (auto d = FailedCondition(c, lookup, Severity::kError, "postcondition_failed",
                                     addr + ": postcondition", secrets, &self)) {
          refusals.emplace_back(addr, std::move(*d));
        } else if (!KnownCondition(c, lookup, &self)) {
          change.postconditions.push_back(c);
        }
      }
      if (change.action != Action::kNoOp) return;
      for (const ConditionConfig& c : change.preconditions) {
        refusals.emplace_back(addr, UncheckedCondition(c, addr + ": precondition"));
      }
      for (const ConditionConfig& c : change.postconditions) {
        refusals.emplace_back(addr, UncheckedCondition(c, addr + ": postcondition"));
      }
      change.preconditions.clear();
      change.postconditions.clear();
    };
    if (st == state.resources.end()) {
      ch.action = Action::kCreate;
      ch.changes = CreatedFields(resolved, info);
      planned[addr] = PlannedNew(resolved, info);
      finish(ch);
      plan.changes.push_back(std::move(ch));
      continue;
    }
    ch.remote_id = st->second.id;
    ch.prior_depends_on = st->second.depends_on;
    const Value* current = &st->second.attributes;
    if (options.refresh) {
      auto lv = live.find(addr);
      if (lv != live.end()) {
        if (!lv->second) {
          ch.action = Action::kCreate;
          ch.note = "deleted outside Cairn; it will be created again";
          ch.remote_id.clear();
          ch.changes = CreatedFields(resolved, info);
          planned[addr] = PlannedNew(resolved, info);
          finish(ch);
          plan.changes.push_back(std::move(ch));
          continue;
        }
        current = &*lv->second;
      }
    }
    ch.before = *current;

    if (resolved.is_object()) {
      for (const auto& [field, after] : resolved.items()) {
        if (info.computed.count(field) || Contains(rc.lifecycle.ignore_changes, field)) continue;
        Value before = current->contains(field) ? current->at(field) : Value(nullptr);
        bool unknown = ContainsUnknown(after);
        if (!unknown && SameFieldValue(kinds, before, after, info.references.count(field) > 0)) {
          continue;
        }
        AttributeChange ac{field, before, unknown ? UnknownValue() : after,
                           info.immutable.count(field) > 0};
        if (ac.forces_replacement) ch.replace_fields.push_back(field);
        ch.changes.push_back(std::move(ac));
      }
    }
    // A resource that failed is replaced whatever its fields say: it exists
    // but cannot be used, and nothing may be built on it.
    ch.replace_reason = st->second.tainted;
    if (ch.replace_reason.empty() && options.refresh && current->is_object()) {
      auto status = current->find("status");
      if (status != current->end() && *status == "failed") {
        ch.replace_reason = "failed: the API reports its status as failed";
      }
    }
    if (ch.replace_fields.empty() && ch.replace_reason.empty() && forced.count(addr)) {
      ch.replace_reason = "replacement requested with --replace";
    }
    if (ch.replace_fields.empty() && ch.replace_reason.empty() && any_triggers) {
      ch.replace_reason = triggered(rc);
    }
    // A grow-only field (a volume's size) the API refuses to lower: an error
    // now rather than at apply, unless the resource is replaced anyway.
    if (ch.replace_fields.empty() && ch.replace_reason.empty()) {
      for (const AttributeChange& ac : ch.changes) {
        if (!info.grow_only.count(ac.field) || !ac.before.is_number() || !ac.after.is_number() ||
            !(ac.after < ac.before)) {
          continue;
        }
        result.diagnostics.push_back(
            {Severity::kError, "cannot_shrink",
             addr + ": " + ac.field + " cannot shrink from " + ac.before.dump() + " to " +
                 ac.after.dump() + ": the API only lets it grow",
             "keep it at " + ac.before.dump() +
                 " or more; or replace the resource with a new one (whose data starts empty) by "
                 "planning and applying with --replace '" +
                 addr + "'",
             rc.LocationOf(ac.field)});
      }
    }
    if (!ch.replace_fields.empty() || !ch.replace_reason.empty()) {
      ch.action = Action::kReplace;
      planned[addr] = PlannedNew(resolved, info);
      if (rc.lifecycle.prevent_destroy) {
        std::string why = ch.replace_fields.empty()
                              ? ch.replace_reason
                              : ch.replace_fields.front() + " forces replacement";
        refusals.emplace_back(
            addr,
            Diagnostic{
                Severity::kError, "prevent_destroy",
                addr + " has lifecycle.prevent_destroy set, but the plan must replace it (" + why +
                    ")",
                "Remove prevent_destroy, or change the manifest so that it does not replace it.",
                // The field that forces the replacement, else the resource's name.
                rc.LocationOf(ch.replace_fields.empty() ? "" : ch.replace_fields.front())});
      }
    } else {
      ch.action = ch.changes.empty() ? Action::kNoOp : Action::kUpdate;
      Value merged = *current;
      if (resolved.is_object()) {
        for (const auto& [field, after] : resolved.items()) {
          if (!Contains(rc.lifecycle.ignore_changes, field)) merged[field] = after;
        }
      }
      planned[addr] = std::move(merged);
    }
    finish(ch);
    plan.changes.push_back(std::move(ch));
  }

  // Deletes: everything in state no longer desired (or everything, when
  // destroying), dependents before their dependencies.
  std::vector<PlannedChange> deletes;
  for (const auto& [addr, rs] : state.resources) {
    if (!options.destroy && desired_addresses.count(addr)) continue;
    PlannedChange ch;
    ch.address = addr;
    bool deposed = false;
    std::optional<ResourceAddress> parsed = ParseStateAddress(addr, &deposed);
    if (parsed) ch.parsed_address = *parsed;
    ch.kind = rs.kind;
    ch.action = Action::kDelete;
    ch.remote_id = rs.id;
    ch.before = rs.attributes;
    ch.after = nullptr;
    ch.prior_depends_on = rs.depends_on;
    if (options.destroy) {
      if (parsed && !deposed) {
        if (const ResourceConfig* rc = config.Find(*parsed); rc && rc->lifecycle.prevent_destroy) {
          refusals.emplace_back(
              addr, Diagnostic{Severity::kError, "prevent_destroy",
                               addr + " has lifecycle.prevent_destroy set and cannot be destroyed",
                               "Remove prevent_destroy from its manifest to destroy it.",
                               rc->LocationOf("")});
        }
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
  {
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
    for (size_t i : sorted.order) plan.changes.push_back(std::move(deletes[i]));
    for (size_t i : sorted.unplaced) plan.changes.push_back(std::move(deletes[i]));
  }

  if (!options.targets.empty()) {
    std::set<std::string> selected =
        SelectTargets(plan.changes, config, state, options.targets, result.diagnostics);
    std::erase_if(plan.changes, [&](const PlannedChange& c) { return !selected.count(c.address); });
    std::erase_if(refusals, [&](const auto& r) { return !selected.count(r.first); });
  }
  for (auto& [addr, d] : refusals) result.diagnostics.push_back(std::move(d));

  if (!options.destroy) {
    for (const auto& out : config.outputs) {
      plan.outputs.push_back({out.name, out.value, out.sensitive});
      for (const ConditionConfig& c : out.preconditions) {
        if (auto d = FailedCondition(c, lookup, Severity::kError, "precondition_failed",
                                     "output " + out.name + ": precondition", secrets)) {
          result.diagnostics.push_back(std::move(*d));
        } else if (!KnownCondition(c, lookup)) {
          plan.outputs.back().preconditions.push_back(c);
        }
      }
    }
    // Checks: what the stack will be once applied, a warning when not; what
    // the plan cannot tell, apply evaluates at its end.
    for (const CheckConfig& check : config.checks) {
      CheckConfig undecided{check.name, {}, check.location};
      CheckResult outcome{check.name, CheckResult::Status::kPassed, {}};
      for (const ConditionConfig& c : check.asserts) {
        if (auto d = FailedCondition(c, lookup, Severity::kWarning, "check_failed",
                                     "check " + check.name, secrets)) {
          outcome.messages.push_back(d->summary);
          result.diagnostics.push_back(std::move(*d));
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
  } else if (!options.targets.empty()) {
    // A targeted destroy keeps every output whose value still resolves once
    // its deletes are made: those that refer to nothing it destroys (nor to
    // anything never made). The others are removed, as a destroy removes all.
    for (const auto& c : plan.changes) {
      if (c.action == Action::kDelete) planned.erase(c.address);
    }
    for (const auto& out : config.outputs) {
      if (ContainsUnknown(resolve(out.value, lookup))) continue;
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
      result.diagnostics.push_back(
          {Severity::kError, e.code,
           MaskSecrets(
               "output " + out.name + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message,
               secrets),
           MaskSecrets(e.detail, secrets), at});
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
  plan.sensitive_values = std::move(secrets);
  return result;
}

// The journal's pending operations, as the plan shows them: what apply
// completes first, and what the plan can tell of what follows.
void AddPending(const StackConfig& config, const PlanOptions& options, Plan& plan) {
  std::map<std::string, std::string> acted_on;  // address -> the action pending there
  for (const JournalEntry& e : options.pending) {
    PendingOperation op;
    op.address = e.address;
    op.kind = e.kind;
    op.action = ParseAction(e.action).value_or(Action::kDelete);
    op.remote_id = e.remote_id;
    if (op.action == Action::kCreate) {
      // What it makes is in the state once it completes, and goes with
      // the rest when the manifests no longer declare it.
      auto parsed = ParseStateAddress(e.address);
      if (options.destroy && options.targets.empty()) {
        op.note = "then destroyed";
      } else if (!options.destroy && parsed && !config.Find(*parsed)) {
        op.note = "then destroyed: no longer in the manifests";
      }
    }
    acted_on[op.address] = e.action;
    plan.pending.push_back(std::move(op));
  }
  for (PlannedChange& c : plan.changes) {
    auto it = acted_on.find(c.address);
    if (it == acted_on.end() || c.action == Action::kNoOp) continue;
    c.note += (c.note.empty() ? "" : "; ") + std::string("an interrupted ") + it->second +
              " of it completes first, and apply plans it again after that";
  }
}

// MakePlan, but for the journal's pending operations.
PlanResult PlanWithMoves(const StackConfig& config, const StateSnapshot& state,
                         const LiveView& live, const KindCatalog& kinds,
                         const PlanOptions& options) {
  // No copy of the state (nor of the live view) unless there is a move.
  if (config.moved.empty()) return PlanMoved(config, state, live, kinds, options);
  AddressMoves moves;
  std::vector<Diagnostic> diagnostics;
  std::set<std::string> destinations;
  StateSnapshot moved = state;
  for (const MovedConfig& m : config.moved) {
    MovePlan mp = PlanMove(moved, m.from, m.to);
    if (mp.moves.empty()) continue;  // moved already (or never applied)
    // An implied move (MovedConfig::implicit) is made only when it can be.
    if (m.implicit && (!mp.error.empty() || moved.resources.count(m.to.ToString()))) continue;
    if (!mp.error.empty()) {
      diagnostics.push_back({Severity::kError, "invalid_move", mp.error, "", m.location});
      continue;
    }
    std::vector<std::string> taken;
    for (const auto& [src, dst] : mp.moves) {
      if (moved.resources.count(dst) || !destinations.insert(dst).second) taken.push_back(dst);
    }
    if (!taken.empty()) {
      diagnostics.push_back({Severity::kError, "moved_target_exists",
                             "cannot move " + m.from.ToString() + " to " + m.to.ToString() + ": " +
                                 taken.front() + " is already in the state",
                             "remove the move, or the resource at " + taken.front() +
                                 " ('cairn state rm') if it is the stale one",
                             m.location});
      continue;
    }
    moved = ApplyMoves(moved, mp.moves);
    moves.insert(moves.end(), mp.moves.begin(), mp.moves.end());
  }
  if (moves.empty() && diagnostics.empty()) return PlanMoved(config, state, live, kinds, options);
  moves = NetMoves(moves);
  std::map<std::string, std::string> origin, now_at;  // new <-> recorded address
  for (const auto& [was, now] : moves) {
    origin[now] = was;
    now_at[was] = now;
  }
  LiveView moved_live;
  for (const auto& [addr, v] : live) {
    auto it = now_at.find(addr);
    moved_live.emplace(it == now_at.end() ? addr : it->second, v);
  }
  PlanResult result = PlanMoved(config, moved, moved_live, kinds, options);
  result.plan.lineage = state.lineage;
  result.plan.serial = state.serial;
  result.plan.moves = moves;
  for (PlannedChange& c : result.plan.changes) {
    if (auto it = origin.find(c.address); it != origin.end()) c.moved_from = it->second;
  }
  result.diagnostics.insert(result.diagnostics.begin(), diagnostics.begin(), diagnostics.end());
  return result;
}

}  // namespace

PlanResult MakePlan(const StackConfig& config, const StateSnapshot& state, const LiveView& live,
                    const KindCatalog& kinds, const PlanOptions& options) {
  PlanResult result = PlanWithMoves(config, state, live, kinds, options);
  AddPending(config, options, result.plan);
  return result;
}

// Conditions as a saved plan holds them (docs/plan-format.md).
Value ConditionsToJson(const std::vector<ConditionConfig>& conditions) {
  Value out = Value::array();
  for (const ConditionConfig& c : conditions) {
    out.push_back({{"condition", c.condition},
                   {"error_message", c.error_message},
                   {"file", c.location.file},
                   {"line", c.location.line},
                   {"column", c.location.column},
                   {"length", c.location.length}});
  }
  return out;
}

std::vector<ConditionConfig> ConditionsFromJson(const Value& j) {
  std::vector<ConditionConfig> out;
  for (const Value& c : j) {
    ConditionConfig cc;
    cc.condition = c.at("condition");
    cc.error_message = c.value("error_message", Value(""));
    cc.location.file = c.value("file", "");
    cc.location.line = c.value("line", 0);
    cc.location.column = c.value("column", 0);
    cc.location.length = std::max(1, c.value("length", 1));
    out.push_back(std::move(cc));
  }
  return out;
}

Value PlanToJson(const Plan& plan) {
  Value changes = Value::array();
  for (const auto& c : plan.changes) {
    Value diffs = Value::array();
    for (const auto& d : c.changes) {
      diffs.push_back({{"field", d.field},
                       {"before", d.before},
                       {"after", d.after},
                       {"forces_replacement", d.forces_replacement}});
    }
    changes.push_back({{"address", c.address},
                       {"kind", c.kind},
                       {"action", ActionName(c.action)},
                       {"remote_id", c.remote_id},
                       {"before", c.before},
                       {"after", c.after},
                       {"changes", diffs},
                       {"replace_fields", c.replace_fields},
                       {"replace_reason", c.replace_reason},
                       {"create_before_destroy", c.create_before_destroy},
                       {"depends_on", c.depends_on},
                       {"prior_depends_on", c.prior_depends_on},
                       {"note", c.note}});
    if (!c.moved_from.empty()) changes.back()["moved_from"] = c.moved_from;
    if (!c.preconditions.empty()) {
      changes.back()["preconditions"] = ConditionsToJson(c.preconditions);
    }
    if (!c.postconditions.empty()) {
      changes.back()["postconditions"] = ConditionsToJson(c.postconditions);
    }
  }
  Value outputs = Value::array();
  for (const auto& o : plan.outputs) {
    outputs.push_back({{"name", o.name}, {"value", o.value}, {"sensitive", o.sensitive}});
    if (!o.preconditions.empty()) {
      outputs.back()["preconditions"] = ConditionsToJson(o.preconditions);
    }
  }
  Value output_changes = Value::array();
  for (const auto& o : plan.output_changes) {
    auto shown = [&](const Value& v) {
      return o.sensitive && !v.is_null() ? Value("(sensitive)") : v;
    };
    output_changes.push_back({{"name", o.name},
                              {"action", ActionName(o.action)},
                              {"before", shown(o.before)},
                              {"after", shown(o.after)},
                              {"sensitive", o.sensitive}});
  }
  Value pending = Value::array();
  for (const auto& p : plan.pending) {
    pending.push_back({{"address", p.address},
                       {"kind", p.kind},
                       {"action", ActionName(p.action)},
                       {"remote_id", p.remote_id},
                       {"note", p.note}});
  }
  auto counts = plan.counts();
  Value out = {{"format_version", Plan::kFormatVersion},
               {"stack", plan.stack},
               {"lineage", plan.lineage},
               {"serial", plan.serial},
               {"destroy", plan.destroy},
               {"summary",
                {{"add", counts.add},
                 {"change", counts.change},
                 {"replace", counts.replace},
                 {"destroy", counts.destroy},
                 {"no_op", counts.noop},
                 {"move", counts.move},
                 {"pending", counts.pending}}},
               {"pending_operations", pending},
               {"changes", changes},
               {"outputs", outputs},
               {"output_changes", output_changes}};
  if (!plan.data.empty()) out["data"] = plan.data;
  if (!plan.check_results.empty()) out["check_results"] = CheckResultsToJson(plan.check_results);
  if (!plan.checks.empty()) {
    Value checks = Value::array();
    for (const CheckConfig& check : plan.checks) {
      checks.push_back({{"name", check.name},
                        {"file", check.location.file},
                        {"line", check.location.line},
                        {"column", check.location.column},
                        {"assert", ConditionsToJson(check.asserts)}});
    }
    out["checks"] = checks;
  }
  if (!plan.moves.empty()) {
    Value moves = Value::array();
    for (const auto& [from, to] : plan.moves) moves.push_back({{"from", from}, {"to", to}});
    out["moves"] = moves;
  }
  if (plan.saved) {
    out["saved"] = true;
    out["backend"] = {{"type", plan.backend.type},
                      {"path", plan.backend.path},
                      {"url_env", plan.backend.url_env},
                      {"name", plan.backend.stack_name}};
    out["manifests"] = plan.manifests;
    out["recursive"] = plan.recursive;
  }
  if (!plan.variables.empty()) out["variables"] = plan.variables;
  return out;
}

Result<Plan> PlanFromJson(const Value& j) {
  try {
    if (!j.is_object() || !j.contains("format_version")) {
      return Status::InvalidArgument("not a Cairn plan (no format_version)");
    }
    // Numbers are compared as JSON before any conversion: get<int>() of a
    // float out of int's range is undefined behaviour.
    const Value& version = j.at("format_version");
    if (!version.is_number_integer() || version != Plan::kFormatVersion) {
      return Status::InvalidArgument(
          "plan format version " + version.dump(-1, ' ', false, Value::error_handler_t::replace) +
          " is not supported (this cairn reads version " + std::to_string(Plan::kFormatVersion) +
          "): make the plan again with this cairn ('cairn plan --out FILE')");
    }
    Plan plan;
    plan.stack = j.value("stack", "");
    plan.lineage = j.at("lineage").get<std::string>();
    const Value& serial = j.at("serial");
    // An unsigned value past int64_t's range converts to a negative one.
    if (!serial.is_number_integer() || serial.get<int64_t>() < 0) {
      return Status::InvalidArgument("malformed plan: serial " +
                                     serial.dump(-1, ' ', false, Value::error_handler_t::replace) +
                                     " is not a non-negative integer");
    }
    plan.serial = serial.get<int64_t>();
    plan.destroy = j.value("destroy", false);
    plan.saved = j.value("saved", false);
    for (const auto& c : j.at("changes")) {
      PlannedChange ch;
      ch.address = c.at("address").get<std::string>();
      // As MakePlan does: a state key that is no address (a damaged state)
      // matches no --target, and is still deleted.
      ch.parsed_address = ParseStateAddress(ch.address).value_or(ResourceAddress());
      ch.kind = c.at("kind").get<std::string>();
      auto action = ParseAction(c.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for " + ch.address);
      ch.action = *action;
      ch.remote_id = c.value("remote_id", "");
      ch.before = c.value("before", Value());
      ch.after = c.value("after", Value());
      for (const auto& d : c.value("changes", Value::array())) {
        ch.changes.push_back({d.at("field").get<std::string>(), d.value("before", Value()),
                              d.value("after", Value()), d.value("forces_replacement", false)});
      }
      ch.replace_fields = c.value("replace_fields", std::vector<std::string>{});
      ch.replace_reason = c.value("replace_reason", "");
      ch.create_before_destroy = c.value("create_before_destroy", false);
      ch.depends_on = c.value("depends_on", std::vector<std::string>{});
      ch.prior_depends_on = c.value("prior_depends_on", std::vector<std::string>{});
      ch.note = c.value("note", "");
      ch.moved_from = c.value("moved_from", "");
      ch.preconditions = ConditionsFromJson(c.value("preconditions", Value::array()));
      ch.postconditions = ConditionsFromJson(c.value("postconditions", Value::array()));
      plan.changes.push_back(std::move(ch));
    }
    for (const auto& o : j.value("outputs", Value::array())) {
      plan.outputs.push_back({o.at("name").get<std::string>(), o.value("value", Value()),
                              o.value("sensitive", false),
                              ConditionsFromJson(o.value("preconditions", Value::array()))});
    }
    for (const auto& c : j.value("checks", Value::array())) {
      CheckConfig check;
      check.name = c.at("name").get<std::string>();
      check.location.file = c.value("file", "");
      check.location.line = c.value("line", 0);
      check.location.column = c.value("column", 0);
      check.asserts = ConditionsFromJson(c.at("assert"));
      plan.checks.push_back(std::move(check));
    }
    for (const auto& o : j.value("output_changes", Value::array())) {
      auto action = ParseAction(o.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for output");
      plan.output_changes.push_back({o.at("name").get<std::string>(), *action,
                                     o.value("before", Value()), o.value("after", Value()),
                                     o.value("sensitive", false)});
    }
    if (auto data = j.find("data"); data != j.end()) {
      if (!data->is_object())
        return Status::InvalidArgument("malformed plan: data is not an object");
      for (const auto& [addr, attrs] : data->items()) plan.data[addr] = attrs;
    }
    for (const auto& p : j.value("pending_operations", Value::array())) {
      auto action = ParseAction(p.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for a pending operation");
      plan.pending.push_back({p.at("address").get<std::string>(), p.value("kind", ""), *action,
                              p.value("remote_id", ""), p.value("note", "")});
    }
    for (const auto& m : j.value("moves", Value::array())) {
      plan.moves.emplace_back(m.at("from").get<std::string>(), m.at("to").get<std::string>());
    }
    if (auto vars = j.find("variables"); vars != j.end()) {
      if (!vars->is_object()) {
        return Status::InvalidArgument("malformed plan: variables is not an object");
      }
      for (const auto& [name, v] : vars->items()) plan.variables[name] = v;
    }
    if (plan.saved && !plan.pending.empty()) {
      return Status::InvalidArgument(
          "malformed plan: a saved plan with pending operations (none is saved over them)");
    }
    if (plan.saved) {
      // What ties the plan to its stack: without it, apply could not tell
      // which directory holds the stack planned.
      const Value& backend = j.value("backend", Value());
      const Value& manifests = j.value("manifests", Value());
      if (!backend.is_object() || !manifests.is_object() || manifests.empty()) {
        return Status::InvalidArgument(
            "malformed plan: a saved plan needs its backend and manifests");
      }
      plan.backend.type = backend.at("type").get<std::string>();
      plan.backend.path = backend.value("path", "");
      plan.backend.url_env = backend.value("url_env", "");
      plan.backend.stack_name = backend.value("name", "");
      for (const auto& [file, digest] : manifests.items()) {
        plan.manifests[file] = digest.get<std::string>();
      }
      plan.recursive = j.value("recursive", false);
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("malformed plan: ") + e.what());
  }
}

}  // namespace cairn
