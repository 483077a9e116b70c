// The dependency graph, the last stages of loading a stack: the edges
// between resource instances that depends_on, lifecycle.replace_triggered_by
// and the references written in specs and outputs make (references.h
// resolves each reference), and the graph they form (engine/graph): its
// cycles, and the resources in the order they can be created. Resources
// and what was written in, edges, ordered resources and diagnostics out.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/references.h"

namespace cairn {

// `from` depends on `to` (indexes into the resources) because of what is
// written at `why`.
struct Edge {
  size_t from = 0, to = 0;
  SourceLocation why;
};

struct EdgesResult {
  std::vector<Edge> edges;
  std::vector<Diagnostic> diagnostics;
};

// The depends_on entries of each resource document, by its base address
// ("module.a.kind.name"): the address written and where. An address with
// no kind is a module's (module.NAME, module.NAME[KEY]: its `module` path,
// from the stack's root).
using DependsOn = std::map<std::string, std::vector<std::pair<ResourceAddress, SourceLocation>>>;

// depends_on: every instance of a document depends on every instance an
// entry names, or every resource inside the module instances a module
// entry names (unknown_depends_on when it names nothing: no resource, and
// for a module no instance nor call in `modules`, the paths of every
// module instance and of every call with none).
EdgesResult ResolveDependsOn(const DeclaredResources& declared, const DependsOn& depends_on,
                             const std::vector<std::vector<ModuleStep>>& modules = {});

// lifecycle.replace_triggered_by of every resource: each address declared
// (unknown_replace_trigger), its attribute one its kind has
// (unknown_attribute), and not the resource itself; it is a dependency, as
// Terraform makes it.
EdgesResult ResolveTriggers(const DeclaredResources& declared);

// A resource or data source reference written in a resource's spec or in
// an output value, as the loader found it.
struct WrittenReference {
  Expression expr;
  size_t doc = 0;       // the loader's: the document it is written in
  std::string pointer;  // into the spec (resources) or the value (outputs)
  int resource = -1;    // index into the resources, or -1 for an output
  std::string output;   // the loader's output key when resource == -1
  bool exact = false;   // the whole string is this one expression
  SourceLocation location;
  // Written in a module's inputs: checked where it is written, but it joins
  // the graph where the module uses the input (a `derived` use).
  bool check_only = false;
  // Found in a value that came from a module input or output: errors were
  // reported where it was written, so it only adds edges and expands [*].
  bool derived = false;
};

// Resolves every reference in order (references.h): each resolved one is
// an edge from the resource it is written in, unless check_only or written
// in an output. A data source's reference ("data.KIND.NAME.ATTR") makes no
// edge (it is read at plan time): it must name one of `data_addresses`
// ("data.KIND.NAME"), without an index, and an attribute its kind has.
EdgesResult ReferenceEdges(const std::vector<WrittenReference>& uses,
                           const DeclaredResources& declared,
                           const std::set<std::string>& data_addresses);

struct Graph {
  // The resources in dependency order (those in a cycle last, by address),
  // each with its depends_on filled in.
  std::vector<ResourceConfig> resources;
  std::unordered_map<std::string, size_t> index;  // address -> position in `resources`
  std::vector<Diagnostic> diagnostics;            // dependency_cycle
};

// The graph of `resources` and `edges`.
Graph BuildGraph(std::vector<ResourceConfig> resources, const std::vector<Edge>& edges);

}  // namespace cairn
