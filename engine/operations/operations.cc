#include "engine/operations/operations.h"

#include "base/schema/schema_registry.h"
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
    d.code = "internal";
    d.summary = "internal error: planning needs the API but none was opened, please report";
    return {{}, {std::move(d)}};
  }
  LiveView live;
  if (refresh) {
    RefreshOptions ro;
    ro.canonical_id = options.canonical_id;
    ro.stop = stop;
    RefreshResult r = Refresh(state, *provider, ro);
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

ImportRead ReadForImport(const std::vector<ImportItem>& items, const StateSnapshot& state,
                         Provider& provider) {
  ImportRead out;
  for (const ImportItem& it : items) {
    if (auto m = state.resources.find(it.address.ToString()); m != state.resources.end()) {
      out.error = m->first + " is already managed (id " + m->second.id + ")";
      return out;
    }
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
  return out;
}

}  // namespace cairn
