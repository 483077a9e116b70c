#include "engine/watch/watch_run.h"

#include <set>

#include "engine/action.h"
#include "engine/operations/import.h"
#include "engine/plan/conditions.h"
#include "engine/plan/data_sources.h"
#include "engine/plan/plan_steps.h"
#include "engine/plan/refresh.h"

namespace cairn {
namespace {

// The stack's checks and its resources' conditions, decided with the
// values as they are now (the live ones; what refresh did not read, as the
// state recorded it), not as the plan would make them: drift that breaks
// a postcondition is a failing check, though the plan would put it back.
std::vector<CheckResult> WatchLiveChecks(const StackConfig& config, const StateSnapshot& state,
                                         const LiveView& live,
                                         const std::map<std::string, Value>& data) {
  std::map<std::string, Value> now = data;
  for (const auto& [addr, rs] : state.resources) {
    auto lv = live.find(addr);
    if (lv == live.end()) {
      now[addr] = rs.attributes;
    } else if (lv->second) {
      now[addr] = *lv->second;
    }  // deleted outside Cairn: not there
  }
  AttributeLookup lookup = [&](const ResourceAddress& addr,
                               const std::string& attr) -> std::optional<Value> {
    auto it = now.find(addr.ToString());
    if (it == now.end()) return std::nullopt;
    if (attr.empty()) return it->second;
    if (it->second.contains(attr)) return it->second.at(attr);
    return Value(nullptr);
  };
  const std::vector<std::string> secrets = config.SensitiveStrings();
  Plan checks;
  std::vector<Diagnostic> ignored;
  plan::PlanChecks(config, lookup, secrets, checks, ignored);
  std::vector<CheckResult> out = std::move(checks.check_results);
  for (const ResourceConfig& rc : config.resources) {
    const std::string addr = rc.address.ToString();
    auto it = now.find(addr);
    if (it == now.end()) continue;  // not made yet, or deleted: drift says so
    auto decide = [&](const std::vector<ConditionConfig>& conditions, const char* what,
                      const Value* self) {
      CheckResult r{addr + ": " + what, CheckResult::Status::kPassed, {}};
      for (const ConditionConfig& c : conditions) {
        ConditionVerdict v = DecideCondition(c, lookup, self, secrets);
        if (v.kind == ConditionVerdict::Kind::kFails ||
            v.kind == ConditionVerdict::Kind::kInvalid) {
          r.messages.push_back(r.name + " failed: " + v.message);
        }
      }
      if (r.messages.empty()) return;
      r.status = CheckResult::Status::kFailed;
      out.push_back(std::move(r));
    };
    decide(rc.lifecycle.preconditions, "precondition", nullptr);
    decide(rc.lifecycle.postconditions, "postcondition", &it->second);
  }
  return out;
}

}  // namespace

WatchRun RunWatch(const StackConfig& config, const StateSnapshot& state, Provider& provider,
                  const KindCatalog& kinds, const WatchRunOptions& options) {
  WatchRun out;
  UnmanagedScope scope = options.unmanaged;
  PlanOptions po;
  po.refresh = true;
  if (!config.data.empty()) {
    DataSourcesResult data = ReadDataSources(config.data, provider, options.stop);
    if (!data.ok()) {
      out.diagnostics = std::move(data.diagnostics);
      return out;
    }
    if (scope.enabled) {
      for (const DataConfig& d : config.data) {
        auto it = data.values.find(d.Address());
        if (it == data.values.end() || !it->second.contains("id")) continue;
        const Value& id = it->second["id"];
        if (id.is_string()) {
          scope.read_as_data.insert(d.kind + "/" + CanonicalId(kinds, id.get<std::string>()));
        }
      }
    }
    po.data = std::move(data.values);
  }
  RefreshOptions ro;
  ro.stop = options.stop;
  if (scope.enabled) {
    for (const auto& [kind, info] : kinds) ro.extra_kinds.insert(kind);
  }
  RefreshResult refresh = Refresh(state, provider, kinds, ro);
  out.requests = refresh.requests;
  if (!refresh.ok()) {
    out.diagnostics = std::move(refresh.diagnostics);
    return out;
  }
  out.drift = DetectDrift(state, refresh, kinds, scope, IgnoredFieldsOf(config));
  if (ImportsToRead(config, state, kinds)) {
    ImportReads imports = ReadImports(config, state, provider, kinds);
    if (!imports.ok()) {
      out.diagnostics = std::move(imports.diagnostics);
      return out;
    }
    po.imports = std::move(imports.imports);
  }
  out.checks = WatchLiveChecks(config, state, refresh.live, po.data);
  PlanResult planned = MakePlan(config, state, refresh.live, kinds, po);
  out.plan = std::move(planned.plan);
  for (Diagnostic& d : planned.diagnostics) {
    if (d.severity == Severity::kError) out.plan_diagnostics.push_back(std::move(d));
  }
  return out;
}

int PlannedUpdates(const Plan& plan) {
  int n = 0;
  for (const PlannedChange& c : plan.changes) n += c.action == Action::kUpdate;
  return n;
}

std::string JudgeRemediation(const WatchRun& run) {
  const Plan& plan = run.plan;
  if (!run.ok()) return "the run failed: nothing is known to put back";
  if (!run.plan_diagnostics.empty()) {
    return "the plan has errors: " + run.plan_diagnostics.front().summary;
  }
  if (!plan.pending.empty()) {
    return "an interrupted apply left operations in the journal (" + plan.pending.front().address +
           "): run `cairn apply` to finish them";
  }
  std::map<std::string, std::set<std::string>> drifted;  // address -> fields changed outside
  for (const DriftItem& item : run.drift.items) {
    if (item.type != DriftItem::Type::kChanged) continue;
    for (const AttributeChange& c : item.changes) drifted[item.address].insert(c.field);
  }
  const std::string only =
      ": only updates that put drifted fields back are applied; run `cairn plan` to see it";
  for (const PlannedChange& c : plan.changes) {
    if (c.action == Action::kNoOp) continue;
    if (c.action != Action::kUpdate) {
      return std::string("the plan would ") + ActionName(c.action) + " " + c.address + only;
    }
    auto it = drifted.find(c.address);
    if (it == drifted.end()) {
      return "the plan updates " + c.address +
             ", which did not drift (the manifests changed since the last apply?)" + only;
    }
    for (const AttributeChange& f : c.changes) {
      if (!it->second.count(f.field)) {
        return "the plan changes " + c.address + "'s " + f.field + ", which did not drift" + only;
      }
    }
  }
  if (!plan.moves.empty()) return "the plan moves " + plan.moves.front().first + " in the state";
  if (!plan.imports.empty()) return "the plan imports " + plan.imports.front().address;
  if (!plan.forgets.empty()) return "the plan forgets " + plan.forgets.front().address;
  if (!plan.output_changes.empty()) {
    return "the plan changes output " + plan.output_changes.front().name;
  }
  return "";
}

}  // namespace cairn
