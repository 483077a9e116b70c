#include "engine/operations/operations.h"

#include "base/discard.h"
#include "base/schema/schema_registry.h"
#include "engine/apply/write_only.h"
#include "engine/manifest/expr.h"
#include "engine/operations/import.h"
#include "engine/plan/data_sources.h"
#include "engine/plan/refresh.h"

namespace cairn {

KindCatalog KindCatalogFrom(const SchemaRegistry& registry) {
  KindCatalog kinds;
  for (const auto& kind : registry.kinds()) {
    KindInfo info;
    for (const auto& f : registry.Immutable(kind)) info.immutable.insert(f);
    for (const auto& f : registry.GrowOnly(kind)) info.grow_only.insert(f);
    for (const auto& f : registry.WriteOnly(kind)) info.write_only.insert(f);
    for (const auto& f : registry.ComputedNames(kind)) info.computed.insert(f);
    info.references = registry.References(kind);
    info.id_alias = registry.IdAlias(kind);
    kinds[kind] = std::move(info);
  }
  return kinds;
}

std::map<std::string, Value> WriteOnlyValues(const StackConfig& config, const KindCatalog& kinds) {
  std::map<std::string, Value> out;
  const AttributeLookup none = [](const ResourceAddress&, const std::string&) {
    return std::optional<Value>();
  };
  for (const ResourceConfig& rc : config.resources) {
    auto kind = kinds.find(rc.kind);
    if (kind == kinds.end() || !rc.spec.is_object()) continue;
    for (const std::string& field : kind->second.write_only) {
      auto it = rc.spec.find(field);
      if (it == rc.spec.end()) continue;
      std::vector<ResolveError> failed;
      Value v = ResolveReferences(*it, none, nullptr, &failed);
      if (failed.empty() && !ContainsUnknown(v)) out.emplace(WriteOnlyPlaceholder(v), std::move(v));
    }
  }
  return out;
}

namespace {

// PlanStack; with `discard_at_exit`, the live view it read is left to the
// process's end (base/discard.h) rather than freed; with `refreshed`, that
// refresh of `state` is taken instead of refreshing.
PlanResult PlanStackWith(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                         const KindCatalog& kinds, const PlanOptions& options, std::stop_token stop,
                         bool discard_at_exit, RefreshResult* refreshed = nullptr) {
  const bool refresh = options.refresh && !state.resources.empty();
  const bool read_data = !options.destroy && !config.data.empty();
  const bool read_imports = !options.destroy && ImportsToRead(config, state, kinds);
  if (provider == nullptr && (refresh || read_data || read_imports)) {
    Diagnostic d;
    d.severity = Severity::kError;
    d.code = "internal_error";
    d.summary = "internal error: planning needs the API but none was opened, please report";
    return {{}, {std::move(d)}};
  }
  LiveView live;
  if (refresh) {
    RefreshResult r;
    if (refreshed != nullptr) {
      r = std::move(*refreshed);
    } else {
      RefreshOptions ro;
      ro.stop = stop;
      r = Refresh(state, *provider, kinds, ro);
    }
    if (!r.ok()) return {{}, std::move(r.diagnostics)};
    live = std::move(r.live);
  }
  PlanOptions po = options;
  if (read_data) {
    // Those given already (cairn test's `kind: override`) are not read.
    std::vector<DataConfig> to_read;
    for (const DataConfig& d : config.data) {
      if (!options.data.count(d.Address())) to_read.push_back(d);
    }
    DataSourcesResult d = ReadDataSources(to_read, *provider, stop);
    if (!d.ok()) return {{}, std::move(d.diagnostics)};
    po.data.merge(d.values);
  }
  if (read_imports) {
    // Read as the refresh reads: what the plan compares them with.
    ImportReads imports = ReadImports(config, state, *provider, kinds);
    if (!imports.ok()) return {{}, std::move(imports.diagnostics)};
    po.imports = std::move(imports.imports);
  }
  PlanResult result = MakePlan(config, state, live, kinds, po);
  if (discard_at_exit) DiscardAtExit(std::move(live));
  return result;
}

}  // namespace

PlanResult PlanStack(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                     const KindCatalog& kinds, const PlanOptions& options, std::stop_token stop) {
  return PlanStackWith(config, state, provider, kinds, options, std::move(stop), false);
}

PlanResult PlanStack(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                     const KindCatalog& kinds, const StackPlanRequest& request,
                     std::stop_token stop) {
  PlanOptions options;
  options.refresh = request.refresh;
  options.destroy = request.destroy;
  options.targets = request.targets;
  options.excludes = request.excludes;
  options.replace = request.replace;
  options.pending = request.pending;
  PlanResult result = PlanStackWith(config, state, provider, kinds, options, std::move(stop),
                                    request.discard_at_exit, request.refreshed);
  if (result.ok()) result.plan.stack = request.stack_dir;
  return result;
}

StackDrift DetectStackDrift(const StackConfig& config, const StateSnapshot& state,
                            Provider& provider, const KindCatalog& kinds,
                            const StackDriftOptions& options, std::stop_token stop) {
  StackDrift out;
  auto canon = [&](const std::string& id) { return CanonicalId(kinds, id); };
  UnmanagedScope scope = options.unmanaged;
  RefreshOptions ro;
  ro.stop = stop;
  if (scope.enabled) {
    for (const auto& [kind, info] : kinds) ro.extra_kinds.insert(kind);
    // What the data sources read belongs to the stack as much as what it
    // manages: by id, or by filter (the listing of its kind is made anyway).
    if (!config.data.empty()) {
      DataSourcesResult data = ReadDataSources(config.data, provider, stop);
      if (!data.ok()) {
        out.diagnostics = std::move(data.diagnostics);
        return out;
      }
      for (const DataConfig& d : config.data) {
        auto it = data.values.find(d.Address());
        if (it == data.values.end() || !it->second.contains("id")) continue;
        const Value& id = it->second["id"];
        if (id.is_string()) scope.read_as_data.insert(d.kind + "/" + canon(id.get<std::string>()));
      }
    }
  }
  RefreshResult refresh = Refresh(state, provider, kinds, ro);
  if (!refresh.ok()) {
    out.diagnostics = std::move(refresh.diagnostics);
    return out;
  }
  out.diagnostics = std::move(refresh.diagnostics);  // warnings
  out.report = DetectDrift(state, refresh, kinds, scope, IgnoredFieldsOf(config));
  return out;
}

StackDrift DetectStateDrift(const StateSnapshot& state, Provider& provider,
                            const KindCatalog& kinds, std::stop_token stop) {
  return DetectStackDrift(StackConfig(), state, provider, kinds, StackDriftOptions(),
                          std::move(stop));
}

RefreshOnlyPlan PlanRefreshOnly(const StateSnapshot& state, Provider& provider,
                                const KindCatalog& kinds, std::stop_token stop) {
  RefreshOnlyPlan out;
  RefreshOptions ro;
  ro.stop = stop;
  RefreshResult refresh = Refresh(state, provider, kinds, ro);
  out.diagnostics = std::move(refresh.diagnostics);
  if (HasErrors(out.diagnostics)) return out;
  out.report = DetectDrift(state, refresh, kinds, {});
  out.commit = RecordLiveValues(state, refresh, kinds);
  return out;
}

}  // namespace cairn
