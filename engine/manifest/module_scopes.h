// Module scopes, a stage of loading a stack: the tree of scopes that `kind:
// module` documents make, and the decisions taken over it. The stack is
// scope 0; each instance of a module call is a scope of its own, whose
// resources take its path in front of their addresses (`module.app[0].`)
// and whose variables take its inputs. A module call with no instance
// (count 0, an empty for_each) may have an unused scope, so that its files
// are still read and checked.
//
// What is decided here, values in, values and diagnostics out:
//  - whether a call's source may be read (CheckModuleSource: a directory,
//    not one of the calls it is inside, not too deep);
//  - what an instance's variables are given (ResolveModuleInputs: each
//    input checked against the variable it sets, defaults, what is missing);
//  - which scope a module path names (FindModuleScope), how messages name
//    a scope (ModuleScopeName), every module path there is
//    (ModuleInstancePaths);
//  - whether a ${module.NAME.OUTPUT} names an output (CheckModuleOutputUse).
// The loader reads the module directories, evaluates the inputs (their
// strings may read the stack) and creates the scopes, breadth first.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/address.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/references.h"
#include "engine/manifest/variables.h"

namespace cairn {

class Env;
class SchemaRegistry;

// Guards against a module tree that would never end or explode.
inline constexpr size_t kMaxModuleDepth = 16;
inline constexpr size_t kMaxModuleInstances = 10000;

// A declared variable (variables.h) and the index of the document
// declaring it.
struct DeclaredVariable : VariableDecl {
  size_t doc = 0;
};

// A `kind: module` document of a scope, and the scopes of its instances.
struct ModuleCall {
  size_t doc = 0;
  ResourceGroup::Mode mode = ResourceGroup::Mode::kSingle;
  std::vector<std::pair<AddressIndex, size_t>> instances;  // index -> scope
  bool broken = false;                                     // reported where it is declared
  // The call's own depends_on (qualified from the stack's root): every
  // resource inside its instances, nested modules' included, waits for them.
  std::vector<std::pair<ResourceAddress, SourceLocation>> depends_on;
};

// Where documents live: the stack itself (scope 0), or one instance of a
// module.
struct ModuleScope {
  std::vector<ModuleStep> path;  // empty for the stack
  std::string prefix;            // ModulePathPrefix(path)
  std::string dir;               // canonical directory of its manifests
  size_t parent = 0;
  size_t call_doc = 0;  // the module document that made it
  // A module with no instances: its files are read and checked, under a
  // scope whose documents are not loaded.
  bool unused = false;
  // Its documents of these kinds (indexes in the loader's documents).
  std::vector<size_t> variable_docs, module_docs, local_docs;
  // Modules only (the stack's are the loader's and config.variables): the
  // declared variables, and their values in expression form.
  std::map<std::string, DeclaredVariable> variables;
  std::map<std::string, Value> values;
  // Variables whose input is built from a sensitive value, and which one
  // ("sensitive variable \"pw\"").
  std::map<std::string, std::string> sensitive_inputs;
  // Variables whose input is built from an ephemeral value.
  std::set<std::string> ephemeral_inputs;
  // Where each variable's value came from, for a failed validation to
  // point at.
  std::map<std::string, ValueOrigin> origins;
  std::map<std::string, ModuleCall> calls;
  std::map<std::string, size_t> outputs;  // name -> index in the loader's outputs
};

using ModuleScopes = std::vector<ModuleScope>;

// The scope of instance `index` (monostate: an unused scope, or a call
// without count or for_each) of call `name` (document `call_doc`) declared
// in scope `parent`, its manifests in canonical directory `dir`.
ModuleScope ChildScope(const ModuleScopes& scopes, size_t parent, const std::string& name,
                       const AddressIndex& index, const std::string& dir, size_t call_doc);

// "app[0].db" for scope module.app[0].module.db: how messages name it.
std::string ModuleScopeName(const ModuleScopes& scopes, size_t s);

// The scope a module path names, from the stack down; a message when a
// step does not exist ("" when that was reported already: the call is
// broken).
std::variant<size_t, std::string> FindModuleScope(const ModuleScopes& scopes,
                                                  const std::vector<ModuleStep>& path);

// The paths of every module instance, and of every call with none (a call
// with no instance has a scope only when its files were not read for
// another call).
std::vector<std::vector<ModuleStep>> ModuleInstancePaths(const ModuleScopes& scopes);

// A module call's source, once checked.
struct ModuleSource {
  std::string dir;        // as written, from the declaring file's directory
  std::string canonical;  // Env::Canonical(dir)
  SourceLocation location;
};

// The source of module document `doc` declared in scope `s`: a non-empty
// string (missing_field, wrong_type) naming a directory (module_not_found)
// that is not the directory of `s` or of a scope above it (module_cycle),
// with `s` less than kMaxModuleDepth deep (too_many_modules). nullopt,
// with the problem in `diags`, when it is not.
std::optional<ModuleSource> CheckModuleSource(const ModuleScopes& scopes, size_t s,
                                              const ManifestDocument& doc, const Env& env,
                                              std::vector<Diagnostic>& diags);

// What a module instance's variables take.
struct ModuleInputs {
  std::map<std::string, Value> values;                  // in expression form
  std::map<std::string, ValueOrigin> origins;           // of each value
  std::map<std::string, std::string> sensitive_inputs;  // see ModuleScope
  // Strings given to sensitive variables as they are written (an input
  // that is not an expression, a default): for the redactor.
  std::vector<std::string> secrets;
  std::vector<Diagnostic> diagnostics;
};

// The values of `variables`, the variables of module scope `scope_name`
// ("app[0]"), from `inputs` (the call's `inputs`, evaluated for this
// instance: an object) or their defaults: an input no variable declares is
// unknown_input (with "did you mean"), one of the wrong type (known at
// load) wrong_type, a variable with neither missing_input. `sensitive`
// maps an input built from a sensitive value to what it was built from.
// `call` is the module document.
ModuleInputs ResolveModuleInputs(const std::map<std::string, DeclaredVariable>& variables,
                                 const Value& inputs,
                                 const std::map<std::string, std::string>& sensitive,
                                 const ManifestDocument& call, const std::string& scope_name);

// A ${module.PATH.OUTPUT} written in a document: the scope it reads when
// PATH names a module instance that has output OUTPUT; nullopt, with the
// problem in `diags`, when not: unknown_module (nothing when the call was
// reported already), module_internal_reference (OUTPUT is a resource
// kind), unknown_output (with "did you mean").
std::optional<size_t> CheckModuleOutputUse(const ModuleScopes& scopes,
                                           const SchemaRegistry& registry, const Expression& use,
                                           const SourceLocation& at,
                                           std::vector<Diagnostic>& diags);

}  // namespace cairn
