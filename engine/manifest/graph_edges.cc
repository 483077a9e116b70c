#include "engine/manifest/graph_edges.h"

#include <algorithm>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/graph/dependency_graph.h"

namespace cairn {
namespace {

// An error about a reference, unless it is a derived use (reported where
// it was written).
void ReportRef(std::vector<Diagnostic>& diags, const WrittenReference& use, std::string code,
               std::string summary, SourceLocation loc, std::string detail = "") {
  if (!use.derived) {
    AddError(diags, std::move(code), std::move(summary), std::move(loc), std::move(detail));
  }
}

// A reference to a data source: declared, without an index, to an
// attribute its kind has, of the kind the field refers to.
void CheckDataReference(const WrittenReference& use, const DeclaredResources& declared,
                        const std::set<std::string>& data_addresses,
                        std::vector<Diagnostic>& diags) {
  const SchemaRegistry& registry = declared.registry;
  const Expression& e = use.expr;
  const ResourceAddress& t = e.target;
  const std::string kind = t.kind.substr(5);
  if (!registry.HasKind(kind)) {
    ReportRef(diags, use, "unknown_reference",
              "reference to unknown kind \"" + kind + "\" in " + e.ToString(), use.location,
              DidYouMean(kind, registry.kinds()));
    return;
  }
  if (!data_addresses.count(t.BaseString())) {
    std::vector<std::string> names;
    for (const auto& a : data_addresses) {
      if (a.rfind(t.kind + ".", 0) == 0) names.push_back(a.substr(t.kind.size() + 1));
    }
    ReportRef(diags, use, "unknown_reference",
              "reference to undeclared data source " + t.BaseString(), use.location,
              DidYouMean(t.name, names));
    return;
  }
  if (!std::holds_alternative<std::monostate>(t.index) || (e.splat && !e.attr.empty())) {
    ReportRef(diags, use, "invalid_index",
              "a data source has no instances: refer to it without an index", use.location);
    return;
  }
  if (e.attr.empty()) return;  // used whole
  if (!registry.HasAttribute(kind, e.attr)) {
    std::string hint = DidYouMean(e.attr, registry.Attributes(kind));
    ReportRef(diags, use, "unknown_attribute", kind + " has no attribute \"" + e.attr + "\"",
              use.location,
              (hint.empty() ? "" : hint + "\n") + "attributes of " + kind + ": " +
                  JoinNames(registry.Attributes(kind)));
    return;
  }
  if (use.resource >= 0 && use.exact) {
    const std::string field = use.pointer.substr(1, use.pointer.find('/', 1) - 1);
    const auto& refs = registry.References(declared.resources[use.resource].kind);
    auto want = refs.find(field);
    if (want != refs.end() && want->second != kind) {
      AddError(diags, "reference_kind_mismatch",
               "field \"" + field + "\" must refer to " + want->second + ", not to " + kind,
               use.location, "use an id such as ${data." + want->second + ".NAME.id}");
    }
  }
}

}  // namespace

EdgesResult ResolveDependsOn(const DeclaredResources& declared, const DependsOn& depends_on,
                             const std::vector<std::vector<ModuleStep>>& modules) {
  EdgesResult out;
  const SchemaRegistry& registry = declared.registry;
  for (const auto& [base, entries] : depends_on) {
    auto from = declared.groups.find(base);
    if (from == declared.groups.end()) continue;
    for (const auto& [addr, at] : entries) {
      if (addr.kind.empty()) {  // a module: everything inside it
        std::vector<size_t> targets;
        for (size_t t = 0; t < declared.resources.size(); ++t) {
          if (InModule(declared.resources[t].address.module, addr.module)) targets.push_back(t);
        }
        const std::vector<ModuleStep>& path = addr.module;  // not the binding: clang's lambdas
        const bool declared_module =
            std::any_of(modules.begin(), modules.end(),
                        [&](const std::vector<ModuleStep>& m) { return InModule(m, path); });
        if (targets.empty() && !declared_module) {
          std::string text = ModulePathPrefix(addr.module);
          text.pop_back();
          AddError(out.diagnostics, "unknown_depends_on",
                   "depends_on names undeclared module " + text, at);
          continue;
        }
        for (size_t r : from->second.instances) {
          for (size_t t : targets) out.edges.push_back({r, t, at});
        }
        continue;
      }
      auto g = declared.groups.find(addr.BaseString());
      if (g == declared.groups.end()) {
        std::string hint =
            registry.HasKind(addr.kind)
                ? DidYouMean(addr.name, DeclaredNames(declared, addr.kind, addr.module))
                : DidYouMean(addr.kind, registry.kinds());
        AddError(out.diagnostics, "unknown_depends_on",
                 "depends_on names undeclared resource " + addr.ToString(), at, hint);
        continue;
      }
      auto targets = ReferenceTargets(declared, addr, false, true, g->second);
      if (auto* msg = std::get_if<std::string>(&targets)) {
        AddError(out.diagnostics, "unknown_depends_on", "depends_on: " + *msg, at);
        continue;
      }
      for (size_t r : from->second.instances) {
        for (size_t t : std::get<std::vector<size_t>>(targets)) out.edges.push_back({r, t, at});
      }
    }
  }
  return out;
}

EdgesResult ResolveTriggers(const DeclaredResources& declared) {
  EdgesResult out;
  const SchemaRegistry& registry = declared.registry;
  const std::vector<ResourceConfig>& resources = declared.resources;
  for (size_t r = 0; r < resources.size(); ++r) {
    for (const Lifecycle::Trigger& t : resources[r].lifecycle.replace_triggered_by) {
      auto g = declared.groups.find(t.address.BaseString());
      if (g == declared.groups.end()) {
        AddError(
            out.diagnostics, "unknown_replace_trigger",
            "replace_triggered_by names undeclared resource " + t.address.ToString(), t.location,
            DidYouMean(t.address.name, DeclaredNames(declared, t.address.kind, t.address.module)));
        continue;
      }
      if (!t.attr.empty() && !registry.HasAttribute(t.address.kind, t.attr)) {
        AddError(out.diagnostics, "unknown_attribute",
                 t.address.kind + " has no attribute \"" + t.attr + "\"", t.location,
                 DidYouMean(t.attr, registry.Attributes(t.address.kind)));
        continue;
      }
      auto targets = ReferenceTargets(declared, t.address, false, true, g->second);
      if (auto* msg = std::get_if<std::string>(&targets)) {
        AddError(out.diagnostics, "unknown_replace_trigger", "replace_triggered_by: " + *msg,
                 t.location);
        continue;
      }
      for (size_t id : std::get<std::vector<size_t>>(targets)) {
        if (id == r) {
          AddError(out.diagnostics, "unknown_replace_trigger",
                   resources[r].address.ToString() + " cannot be replaced because of itself",
                   t.location);
          continue;
        }
        out.edges.push_back({r, id, t.location});
      }
    }
  }
  return out;
}

EdgesResult ReferenceEdges(const std::vector<WrittenReference>& uses,
                           const DeclaredResources& declared,
                           const std::set<std::string>& data_addresses) {
  EdgesResult out;
  for (const WrittenReference& use : uses) {
    const Expression& e = use.expr;
    if (e.target.kind.rfind("data.", 0) == 0) {
      // Read at plan time: no edge in the graph.
      CheckDataReference(use, declared, data_addresses, out.diagnostics);
      continue;
    }
    ResolvedReference resolved = ResolveReference(
        {&e, &use.location, use.resource, use.pointer, use.exact, use.derived}, declared);
    out.diagnostics.insert(out.diagnostics.end(), resolved.diagnostics.begin(),
                           resolved.diagnostics.end());
    if (!resolved.ok) continue;
    if (use.check_only) continue;  // joins the graph where the module uses it
    if (use.resource >= 0) {
      for (size_t id : resolved.targets) {
        out.edges.push_back({static_cast<size_t>(use.resource), id, use.location});
      }
    }
  }
  return out;
}

Graph BuildGraph(std::vector<ResourceConfig> resources, const std::vector<Edge>& edges) {
  Graph out;
  DependencyGraph graph;
  for (const auto& rc : resources) graph.AddNode(rc.address);
  for (const auto& [from, to, why] : edges) graph.AddEdge(from, to, why);
  for (const auto& cycle : graph.FindCycles()) {
    AddError(out.diagnostics, "dependency_cycle", "dependency cycle: " + cycle.ToString(),
             cycle.location,
             "break the cycle by removing one of these references or depends_on entries");
  }
  std::vector<size_t> order = graph.TopologicalOrder();
  std::vector<bool> placed(resources.size(), false);
  for (size_t i : order) placed[i] = true;
  std::vector<size_t> rest;
  for (size_t i = 0; i < resources.size(); ++i) {
    if (!placed[i]) rest.push_back(i);
  }
  std::sort(rest.begin(), rest.end(),
            [&](size_t a, size_t b) { return resources[a].address < resources[b].address; });
  order.insert(order.end(), rest.begin(), rest.end());
  out.resources.reserve(order.size());
  out.index.reserve(order.size());
  for (size_t i : order) {
    out.index.emplace(graph.address(i).ToString(), out.resources.size());
    ResourceConfig rc = std::move(resources[i]);
    for (size_t dep : graph.Dependencies(i)) rc.depends_on.push_back(graph.address(dep));
    out.resources.push_back(std::move(rc));
  }
  return out;
}

}  // namespace cairn
