// StackConfig: a stack of manifests after loading, as the rest of the engine
// sees it. engine/manifest builds it (LoadStack in loader.h): every document
// parsed, validated against schemas/<kind>.schema.json, variables resolved,
// count/for_each expanded, references checked, and the dependency graph
// built, all before any network call.
//
// Invariants of a StackConfig returned without error diagnostics:
//  - `resources` holds one entry per expanded instance, in a deterministic
//    topological order (dependencies first, ties broken by address text);
//  - every `${...}` left in a spec is a reference to another resource's
//    attribute (`${kind.name.attr}`, `${kind.name[i].attr}`,
//    `${kind.name["k"].attr}`, `${kind.name[*].attr}`); var, env, file,
//    count and each expressions are already substituted;
//  - `depends_on` lists every resource this one refers to or names in
//    `depends_on`, expanded to instance addresses, sorted;
//  - strings are in "expression form" (engine/manifest/expr.h): a literal
//    "${" is kept escaped as "$${", so specs and output values go through
//    ResolveReferences before use.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/address.h"
#include "engine/state/state_cipher.h"

namespace cairn {

// A condition: a precondition or postcondition of a resource or output, or
// an assertion of a `kind: check`. Both values are in expression form
// (engine/manifest/expr.h): `condition` is true or false when it was known
// at load, else its residual, which plan or apply evaluates (a
// postcondition's may read `self`, the resource as the API returned it).
struct ConditionConfig {
  Value condition;
  Value error_message;
  SourceLocation location;  // the condition's value
};

struct Lifecycle {
  std::vector<std::string> ignore_changes;  // top-level spec field names
  bool prevent_destroy = false;
  bool create_before_destroy = false;
  std::vector<ConditionConfig> preconditions, postconditions;
  // Addresses (an instance, a resource's every instance, or ADDRESS.ATTR):
  // when one of them is replaced or updated by the plan (or that attribute
  // changes), this resource is replaced.
  struct Trigger {
    ResourceAddress address;
    bool whole = false;  // no index written: every instance
    std::string attr;    // "" when the resource itself
    SourceLocation location;
  };
  std::vector<Trigger> replace_triggered_by;
};

// Where each top-level field of a document's spec is written: its value's
// position, all in one file (one copy of the file's name, not one a field:
// a stack of 100,000 resources keeps 500,000 of these).
struct FieldLocations {
  struct Field {
    std::string name;
    int line = 0, column = 0, length = 1;
  };
  std::string file;
  std::vector<Field> fields;  // in the spec's order

  // The field's location, or nullopt when it is not written or has none.
  std::optional<SourceLocation> Find(std::string_view field) const;
};

struct ResourceConfig {
  ResourceAddress address;
  std::string kind;  // == address.kind
  // The spec in manifest (snake_case) field names, with spec.name defaulted.
  // May hold "${...}" reference strings (see invariants above).
  Value spec;
  std::vector<ResourceAddress> depends_on;
  Lifecycle lifecycle;
  SourceLocation location;  // the document's `kind:` node
  // Where plan-time errors about it point: its `name:` value, and the value
  // of each top-level spec field as written (shared by the instances of one
  // document; null or without the field when there is none to point at).
  SourceLocation name_location;
  std::shared_ptr<const FieldLocations> field_locations;

  // The field's location if written, else the name's, else the document's.
  SourceLocation LocationOf(std::string_view field) const;
};

struct OutputConfig {
  std::string name;
  Value value;  // may hold references, like a spec
  bool sensitive = false;
  SourceLocation location;
  std::vector<ConditionConfig> preconditions;
};

// A `kind: check` document: assertions evaluated at the end of every plan
// and apply; a failing one is a warning.
struct CheckConfig {
  std::string name;  // with its module's path in front ("module.app.NAME")
  std::vector<ConditionConfig> asserts;
  SourceLocation location;
};

// A `kind: moved` document: the resource (or instance) recorded at `from`
// is the one the manifests now declare at `to` (see engine/state/moves.h).
struct MovedConfig {
  ResourceAddress from, to;
  SourceLocation location;
  // Not written but implied: a resource declared with `enabled` was
  // `count: 1` before (its [0] becomes it). Made only when `from` is in
  // the state and `to` is not; never an error.
  bool implicit = false;
  // A whole module's move (from: module.a, to: module.b): the module
  // instance paths, `from` and `to` then unused. Everything recorded under
  // `from_module` moves under `to_module` (engine/state/moves.h).
  std::vector<ModuleStep> from_module, to_module;

  bool IsModuleMove() const { return !from_module.empty(); }
  // The ends as written ("instance.web", "module.a[0]").
  std::string FromText() const;
  std::string ToText() const;
};

// A `kind: removed` document: what the state records at `from` is no
// longer the stack's. With destroy false the plan forgets it (the state
// drops it, the API is not called: "will no longer be managed"); with
// destroy true it is deleted as if its document had been removed.
struct RemovedConfig {
  // `from`: a resource (every instance of it, when written without an
  // index), one instance, or (nullopt) the module instances `module` names
  // (module.app: every instance of the call; module.app[0]: that one) and
  // everything inside them.
  std::optional<ResourceAddress> resource;
  std::vector<ModuleStep> module;
  bool destroy = true;
  SourceLocation location;  // its `from:` value

  // `from` as text ("instance.web", "module.app[0]").
  std::string FromText() const;
  // Whether the resource instance at `address` is one it removes.
  bool Matches(const ResourceAddress& address) const;
};

// One object a `kind: import` document adopts (one per `for_each` key):
// the object `id` of the API, tracked at `to` (Terraform 1.5's import
// block). At plan time an object the state does not track at `to` is read
// by its id and imported (engine/operations: ReadImports); one it tracks
// there with the same id is imported already, and one with another id is
// an error.
struct ImportConfig {
  ResourceAddress to;  // a resource instance, in the stack or a module
  std::string id;
  // False only when loaded with LoadOptions::allow_undeclared_imports (plan
  // --generate-config): `to` is a resource of the stack no manifest
  // declares, whose document the plan writes.
  bool declared = true;
  SourceLocation location;     // its `to:` value
  SourceLocation id_location;  // its `id:` value
};

// A `kind: data` document: an existing resource the stack reads but does
// not manage, by id or by a filter on its name and region; referred to as
// ${data.KIND.NAME.ATTR}. Read at plan time (engine/plan/data_sources.h).
struct DataConfig {
  std::string kind;  // the resource kind read ("network")
  std::string name;
  std::string id;                             // by id, or
  std::map<std::string, std::string> filter;  // name and/or region
  SourceLocation location;
  SourceLocation name_location;  // its `name:` value, where read errors point
  // "data.KIND.NAME": the key of its attributes in PlanOptions::data.
  std::string Address() const { return "data." + kind + "." + name; }
};

// Requests in flight at once in an apply or destroy, unless the provider
// document or --parallelism says otherwise. Terraform's is 10; here 32,
// measured (docs/benchmarks.md, issue 33): an apply of 1 network + 10,000
// instances at a 1 s provisioning delay took 9.3-9.7 s at 10 and 8.2-8.7 s
// at 32, its destroy 6.9-7.0 s and 5.1-5.4 s, with less CPU on both sides
// (more of each group commit shared); at 1,000 a little faster, at 200 the
// same within 1%, for 6-9 MB more memory.
inline constexpr int kDefaultParallelism = 32;

struct ProviderConfig {
  std::string endpoint;                   // empty: use CAIRN_ENDPOINT
  std::string token_env = "CAIRN_TOKEN";  // name of the environment variable holding the token
  // A PEM file of the CAs to trust for an https endpoint (a private CA),
  // absolute; empty: CAIRN_CA_BUNDLE, else the system's.
  std::string ca_bundle;
  int parallelism = kDefaultParallelism;
  // Timeouts in seconds: "create", "update", "delete" (waiting until ready or
  // gone), "request" (one HTTP exchange), "connect", "operation" (one call's
  // retries of 5xx, 429 and network errors, all attempts together).
  std::map<std::string, int> timeouts;
};

struct BackendConfig {
  std::string type = "sqlite";  // "sqlite" or "postgres"
  std::string path;             // sqlite: file path relative to the stack; empty = .cairn/state.db
  std::string url_env;          // postgres: environment variable holding the connection URL
  // postgres: the key of this stack's rows (the document's `name`,
  // required there).
  std::string stack_name;
  // `encryption`: {key_env | key_file, fallback: {key_env | key_file}}, or
  // {unencrypted: true, fallback: ...} to decrypt (engine/state/state_cipher.h).
  StateEncryptionSpec encryption;
};

// The stack's `kind: watch` document: how `cairn watch` runs it. Unset
// fields take the command's flags.
struct WatchConfig {
  std::optional<std::chrono::milliseconds> interval;  // `interval: 5m`
  // `remediate: none | drift-only`; nullopt: --remediate decides.
  std::optional<bool> remediate_drift;
};

// The non-empty strings in the values of the variables `names` (of
// `variables`), nested ones included: what reports mask
// (engine/report/plan_report.h).
std::vector<std::string> SensitiveStrings(const std::map<std::string, Value>& variables,
                                          const std::vector<std::string>& names);

struct StackConfig {
  std::string root;                   // the stack directory
  std::string workspace = "default";  // LoadOptions::workspace: ${workspace}
  std::vector<ResourceConfig> resources;
  std::vector<OutputConfig> outputs;
  std::vector<MovedConfig> moved;      // in document order
  std::vector<RemovedConfig> removed;  // in document order
  std::vector<ImportConfig> imports;   // in document order, for_each keys sorted
  std::vector<DataConfig> data;
  std::vector<CheckConfig> checks;
  ProviderConfig provider;
  BackendConfig backend;
  WatchConfig watch;
  std::map<std::string, Value> variables;  // resolved values
  std::vector<std::string> sensitive_variables;
  // The variables declared `ephemeral: true` that have a value (each is in
  // sensitive_variables too): a saved plan keeps their names, not their
  // values, and `cairn apply PLAN` takes them again.
  std::vector<std::string> ephemeral_variables;
  // SensitiveStrings(variables, sensitive_variables).
  std::vector<std::string> SensitiveStrings() const;
  // The stack's own locals (`kind: local`), in expression form (expr.h);
  // those built from a sensitive value are in sensitive_locals.
  std::map<std::string, Value> locals;
  std::vector<std::string> sensitive_locals;
  std::vector<std::string> files;  // the manifest files read, in reading order
  // For `cairn console`, what the resources and outputs alone do not say:
  // the outputs of the stack's own module calls by "module.NAME[KEY].OUTPUT"
  // (ModulePathPrefix), in expression form (their residuals written from
  // the stack's root), and which of them are sensitive; and the stack's
  // resources with no instance (count 0, an empty for_each), base address
  // -> "count" or "for_each", so that they read as empty, not undeclared.
  std::map<std::string, Value> module_outputs;
  std::set<std::string> sensitive_module_outputs;
  std::map<std::string, std::string> empty_resources;
  // Address text -> position in `resources`, built by LoadStack so Find() is
  // fast on large stacks. Find() checks each hit and falls back to a scan,
  // so a stale or empty index is never wrong, only slower.
  std::unordered_map<std::string, size_t> resource_index;

  const ResourceConfig* Find(const ResourceAddress& addr) const;
};

// Resolves the attribute `attr` of resource `addr` (an instance address,
// never [*]) to its value ("": the whole object), or nullopt when the
// resource has no such value yet. The caller returns UnknownValue() for
// "known only after apply".
using AttributeLookup =
    std::function<std::optional<Value>(const ResourceAddress& addr, const std::string& attr)>;

}  // namespace cairn
