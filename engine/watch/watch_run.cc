#include "engine/watch/watch_run.h"

#include <set>

#include "engine/action.h"
#include "engine/operations/import.h"
#include "engine/plan/data_sources.h"
#include "engine/plan/refresh.h"

namespace cairn {
namespace {

// A failed precondition or postcondition of a resource, as a check result
// ("instance.web: postcondition failed: ..." -> "instance.web: postcondition").
bool WatchRunConditionCheck(const Diagnostic& d, CheckResult& out) {
  if (d.code != "precondition_failed" && d.code != "postcondition_failed") return false;
  const size_t at = d.summary.find(" failed: ");
  out.name = at == std::string::npos ? d.summary : d.summary.substr(0, at);
  out.status = CheckResult::Status::kFailed;
  out.messages = {at == std::string::npos ? d.summary : d.summary.substr(at + 9)};
  return true;
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
  PlanResult planned = MakePlan(config, state, refresh.live, kinds, po);
  out.plan = std::move(planned.plan);
  out.checks = out.plan.check_results;
  for (Diagnostic& d : planned.diagnostics) {
    CheckResult c;
    if (WatchRunConditionCheck(d, c)) {
      out.checks.push_back(std::move(c));
    } else if (d.severity == Severity::kError) {
      out.plan_diagnostics.push_back(std::move(d));
    }
  }
  // A false condition ends the plan as an error: nothing to apply either.
  if (out.checks.size() > out.plan.check_results.size() && out.plan_diagnostics.empty()) {
    out.plan_diagnostics.push_back({Severity::kError,
                                    "condition_failed",
                                    "a precondition or postcondition is false (see the checks)",
                                    "",
                                    {}});
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
  if (!plan.moves.empty()) return "the plan moves " + plan.moves.front().first + " in the state";
  if (!plan.imports.empty()) return "the plan imports " + plan.imports.front().address;
  if (!plan.forgets.empty()) return "the plan forgets " + plan.forgets.front().address;
  if (!plan.output_changes.empty()) {
    return "the plan changes output " + plan.output_changes.front().name;
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
  return "";
}

}  // namespace cairn
