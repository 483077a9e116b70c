#include "engine/manifest/resource_declarations.h"

#include "engine/manifest/lifecycle.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

void RefuseInstances(const ManifestDocument& doc, Instances::Mode mode, const std::string& base,
                     size_t n, size_t before, size_t max_instances,
                     std::vector<Diagnostic>& diags) {
  const char* key = mode == Instances::Mode::kCount     ? "count"
                    : mode == Instances::Mode::kForEach ? "for_each"
                                                        : nullptr;
  AddError(diags, "too_many_instances",
           "the stack has more than " + std::to_string(max_instances) + " resource instances",
           key ? NodeLoc(doc.file, ChildNode(doc.node, key)) : doc.location,
           base + "'s " + std::to_string(n) + " take it over the limit, with " +
               std::to_string(before) +
               " declared before it; if the stack really is this large, raise the limit with "
               "--max-instances or CAIRN_MAX_INSTANCES");
}

}  // namespace

ResourceDeclarations DeclareResources(const std::vector<ManifestDocument>& docs,
                                      const std::vector<size_t>& resource_docs,
                                      const ModuleScopes& scopes, const SchemaRegistry& registry,
                                      size_t max_instances, const ResourceInstances& instances_of,
                                      std::vector<Diagnostic>& diags) {
  static const Value kEmptySpec = Value::object();
  ResourceDeclarations out;
  std::map<std::string, SourceLocation> first;
  size_t total = 0;
  out.resources.reserve(resource_docs.size());
  for (size_t di : resource_docs) {
    const ManifestDocument& doc = docs[di];
    const ModuleScope& scope = scopes[doc.scope];
    std::string base = scope.prefix + doc.kind + "." + doc.name;
    SourceLocation name_loc = NodeLoc(doc.file, ChildNode(doc.node, "name"));
    if (auto [it, inserted] = first.emplace(base, name_loc); !inserted) {
      AddError(diags, "duplicate_resource", "resource " + base + " is declared twice", name_loc,
               "first declared at " + LocationText(it->second));
      continue;
    }
    ResourceGroup group;
    group.kind = doc.kind;
    group.name = doc.name;
    group.module = scope.path;
    group.doc = di;
    const auto& [expanded, instances_ref] = instances_of(di);
    Instances instances = instances_ref;
    bool broken = !expanded;
    group.mode = instances.mode;
    Lifecycle lifecycle;
    if (doc.value.contains("lifecycle")) {
      lifecycle = LoadLifecycle(doc, registry, scope.path, diags);
    }
    // depends_on entries are resolved once every resource is known.
    if (doc.value.contains("depends_on")) {
      for (auto& entry : LoadDependsOn(doc, scope.path, diags)) {
        out.depends_on[base].push_back(std::move(entry));
      }
    }
    // And what the module calls around it depend on.
    for (size_t a = doc.scope; a != 0; a = scopes[a].parent) {
      const ModuleScope& inner = scopes[a];
      auto call = scopes[inner.parent].calls.find(inner.path.back().name);
      if (call == scopes[inner.parent].calls.end()) continue;
      for (const auto& entry : call->second.depends_on) out.depends_on[base].push_back(entry);
    }
    const Value* spec = nullptr;
    YamlNode spec_node = ChildNode(doc.node, "spec");
    if (!doc.value.contains("spec") || doc.value["spec"].is_null()) {
      spec = &kEmptySpec;
      spec_node = doc.node;
    } else if (!doc.value["spec"].is_object()) {
      AddError(diags, "wrong_type",
               "spec must be a mapping, not " + ValueTypeNoun(doc.value["spec"]),
               NodeLoc(doc.file, spec_node));
      broken = true;
    } else {
      spec = &doc.value["spec"];
    }
    out.spec_nodes.emplace(base, spec_node);
    if (broken) {
      out.broken.emplace(base, std::move(group));
      continue;
    }
    const size_t n = instances.indexes.size();
    if (total + n > max_instances) {
      // Reported at the resource that takes the stack over; the others
      // are not looked at, so that expanding them costs nothing either.
      RefuseInstances(doc, instances.mode, base, n, total, max_instances, diags);
      out.too_many_instances = true;
      out.resources.clear();
      return out;
    }
    total += n;
    out.resources.push_back({di, std::move(base), std::move(group), std::move(instances),
                             std::move(lifecycle), spec, spec_node});
  }
  return out;
}

}  // namespace cairn
