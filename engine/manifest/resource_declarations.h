// Resource declarations, a stage of loading a stack: every resource
// document of every scope (module_scopes.h) declared before any instance
// is made. Each is declared once per scope (duplicate_resource), with its
// instances (asked of the loader, which evaluates them once per document:
// declared_instances.h), its lifecycle and depends_on (lifecycle.h; a
// resource in a module also waits for the depends_on of every module call
// around it, as Terraform's depends_on on a module does), and its spec (a
// mapping: wrong_type). The number of instances is counted before any is
// made: past the limit none is (too_many_instances), as they could take
// more memory than there is. The loader then makes each instance,
// evaluating its spec and conditions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/expand.h"
#include "engine/manifest/graph_edges.h"
#include "engine/manifest/module_scopes.h"
#include "engine/manifest/references.h"

namespace cairn {

class SchemaRegistry;

// A resource document whose instances are known, before they are made.
struct DeclaredResource {
  size_t doc = 0;       // index in the loader's documents
  std::string base;     // its address without an index, its module's path in front
  ResourceGroup group;  // its instances not made yet
  Instances instances;
  Lifecycle lifecycle;          // as written: its conditions are evaluated per instance
  const Value* spec = nullptr;  // the document's, or an empty mapping when it has none
  YamlNode spec_node;           // the spec's node, or the document's when it has none
};

struct ResourceDeclarations {
  std::vector<DeclaredResource> resources;  // in the order declared
  // Resources declared but whose instances are not known or whose spec is
  // not a mapping (reported): references to them are still checked.
  std::map<std::string, ResourceGroup> broken;
  std::map<std::string, YamlNode> spec_nodes;  // by base address
  DependsOn depends_on;                        // by base address
  bool too_many_instances = false;             // reported; `resources` is empty
};

// The instances of resource document `doc`: whether they are known, and
// they (or, when not, the mode it asked for).
using ResourceInstances = std::function<const std::pair<bool, Instances>&(size_t doc)>;

// Declares `resource_docs` (indexes into `docs`), at most `max_instances`
// instances in all.
ResourceDeclarations DeclareResources(const std::vector<ManifestDocument>& docs,
                                      const std::vector<size_t>& resource_docs,
                                      const ModuleScopes& scopes, const SchemaRegistry& registry,
                                      size_t max_instances, const ResourceInstances& instances_of,
                                      std::vector<Diagnostic>& diags);

}  // namespace cairn
