// References, a stage of loading a stack: what a ${KIND.NAME[IDX].ATTR}
// written in a resource's spec or an output resolves to among the resources
// the stack declares, or why it resolves to nothing (an unknown kind, an
// undeclared resource, an index that does not fit how it expands, an
// attribute its kind does not have or that it does not set, its own
// computed attribute, a reference field given the wrong kind). Values in,
// the instances it names and diagnostics out; the loader adds the edges to
// the graph.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/expand.h"
#include "engine/manifest/expr.h"

namespace cairn {

class SchemaRegistry;

// A resource document as declared, by base address ("module.a.kind.name"):
// how it expands, and its instances.
struct ResourceGroup {
  std::string kind;
  std::string name;
  std::vector<ModuleStep> module;  // the module instance it is declared in
  size_t doc = 0;                  // the loader's: the document declaring it
  using Mode = Instances::Mode;
  Mode mode = Mode::kSingle;
  std::vector<size_t> instances;  // indexes into the resources, index/key order
};

// What references resolve against.
struct DeclaredResources {
  const std::vector<ResourceConfig>& resources;        // every instance
  const std::map<std::string, ResourceGroup>& groups;  // by base address
  const SchemaRegistry& registry;
};

// The names of the resources of `kind` declared in `module`: for "did you
// mean".
std::vector<std::string> DeclaredNames(const DeclaredResources& declared, const std::string& kind,
                                       const std::vector<ModuleStep>& module);

// The instances `addr` names in group `g`: one for an index, all of them
// for a splat ([*]), or, with `want_all`, for an address without index (as
// depends_on takes it); else why not, as a message.
std::variant<std::vector<size_t>, std::string> ReferenceTargets(const DeclaredResources& declared,
                                                                const ResourceAddress& addr,
                                                                bool splat, bool want_all,
                                                                const ResourceGroup& g);

// One reference to a resource (not a data source) to resolve.
// Views: what they point at outlives the call.
struct ReferenceUse {
  const Expression* expr = nullptr;  // its target qualified with its module
  const SourceLocation* location = nullptr;
  int from = -1;             // the referring resource's index, or -1 in an output
  std::string_view pointer;  // where in its spec (JSON pointer)
  bool exact = false;        // the whole string is this reference
  // Found in a value that came from a module's input or output: reported
  // where it was written already, so only a wrong kind is reported again.
  bool derived = false;
};

struct ResolvedReference {
  bool ok = false;
  std::vector<size_t> targets;  // the instances it names, when ok
  std::vector<Diagnostic> diagnostics;
};

ResolvedReference ResolveReference(const ReferenceUse& use, const DeclaredResources& declared);

}  // namespace cairn
