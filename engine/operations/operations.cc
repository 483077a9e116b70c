#include "engine/operations/operations.h"

#include "base/schema/schema_registry.h"
#include "engine/operations/state_check.h"
#include "engine/plan/data_sources.h"
#include "engine/plan/refresh.h"

namespace cairn {

KindCatalog KindCatalogFrom(const SchemaRegistry& registry) {
  KindCatalog kinds;
  for (const auto& kind : registry.kinds()) {
    KindInfo info;
    for (const auto& f : registry.Immutable(kind)) info.immutable.insert(f);
    for (const auto& f : registry.GrowOnly(kind)) info.grow_only.insert(f);
    for (const auto& f : registry.ComputedNames(kind)) info.computed.insert(f);
    info.references = registry.References(kind);
    info.id_alias = registry.IdAlias(kind);
    kinds[kind] = std::move(info);
  }
  return kinds;
}

PlanResult PlanStack(const StackConfig& config, const StateSnapshot& state, Provider* provider,
                     const KindCatalog& kinds, const PlanOptions& options, std::stop_token stop) {
  const bool refresh = options.refresh && !state.resources.empty();
  const bool read_data = !options.destroy && !config.data.empty();
  if (provider == nullptr && (refresh || read_data)) {
    Diagnostic d;
    d.severity = Severity::kError;
    d.code = "internal_error";
    d.summary = "internal error: planning needs the API but none was opened, please report";
    return {{}, {std::move(d)}};
  }
  LiveView live;
  if (refresh) {
    RefreshOptions ro;
    ro.stop = stop;
    RefreshResult r = Refresh(state, *provider, kinds, ro);
    if (!r.ok()) return {{}, std::move(r.diagnostics)};
    live = std::move(r.live);
  }
  PlanOptions po = options;
  if (read_data) {
    DataSourcesResult d = ReadDataSources(config.data, *provider, stop);
    if (!d.ok()) return {{}, std::move(d.diagnostics)};
    po.data = std::move(d.values);
  }
  return MakePlan(config, state, live, kinds, po);
}

namespace {

// Why the objects `records` adopt cannot be tracked at their addresses in
// `state` (one already is, elsewhere, or two are one), or "".
std::string TrackedElsewhere(const StateSnapshot& state, const std::vector<ResourceState>& records,
                             const KindCatalog& kinds) {
  StateSnapshot after = state;
  std::vector<std::string> added;
  for (const ResourceState& rs : records) {
    after.resources[rs.address] = rs;
    added.push_back(rs.address);
  }
  StateCheckOptions options;
  options.kinds = kinds;
  std::vector<Diagnostic> twice = CheckTrackedOnce(after, added, options);
  return twice.empty() ? "" : twice.front().summary + "; " + twice.front().detail;
}

}  // namespace
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

ImportRead ReadForImport(const std::vector<ImportItem>& items, const StateSnapshot& state,
                         Provider& provider, const KindCatalog& kinds) {
  ImportRead out;
  for (const ImportItem& it : items) {
    if (auto m = state.resources.find(it.address.ToString()); m != state.resources.end()) {
      out.error = m->first + " is already managed (id " + m->second.id + ")";
      return out;
    }
  }
  // An object tracked already is refused before anything is read: by the
  // ids given, then (below) by the ids the API returns.
  std::vector<ResourceState> given;
  for (const ImportItem& it : items) {
    ResourceState rs;
    rs.address = it.address.ToString();
    rs.kind = it.address.kind;
    rs.id = it.id;
    given.push_back(std::move(rs));
  }
  if (std::string why = TrackedElsewhere(state, given, kinds); !why.empty()) {
    out.error = why;
    return out;
  }
  for (const ImportItem& it : items) {
    ReadResponse read = provider.Read({it.address.kind, it.id}, {});
    if (!read.status.ok()) {
      out.diagnostics = std::move(read.diagnostics);
      out.error = "could not read " + it.address.kind + " " + it.id + ": " + read.status.message();
      out.records.clear();
      return out;
    }
    if (!read.resource) {
      out.error = "there is no " + it.address.kind + " with id " + it.id;
      out.records.clear();
      return out;
    }
    ResourceState rs;
    rs.address = it.address.ToString();
    rs.kind = it.address.kind;
    rs.id = read.resource->id;
    rs.attributes = read.resource->attributes;
    rs.attributes["id"] = rs.id;
    out.records.push_back(std::move(rs));
  }
  if (std::string why = TrackedElsewhere(state, out.records, kinds); !why.empty()) {
    out.error = why;
    out.records.clear();
  }
  return out;
}

}  // namespace cairn
