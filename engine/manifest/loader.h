// LoadStack: reads a stack of YAML manifests into a StackConfig (config.h),
// doing every check that needs no network call: YAML syntax, document
// shape, variables, expressions, count/for_each expansion, schema
// validation (base/schema), references, private key material, provider
// token literals, and the dependency graph (engine/graph) with its cycles.
//
// Every problem becomes a Diagnostic with the file:line:col of the offending
// YAML node; all of them are collected and returned sorted, never only the
// first. Third-party exceptions (yaml-cpp, valijson) are caught here.
// docs/manifests.md documents the language and every diagnostic code.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"

namespace cairn {

class Env;
class SchemaRegistry;

// Sizes of what a stack reads (docs/manifests.md): a manifest or variable
// file, and a file read by file(), whose content becomes one value sent to
// the API (whose request bodies are limited to 1 MiB). Only regular files
// are read: a FIFO or a device could block or never end.
inline constexpr size_t kMaxManifestFileBytes = size_t{64} << 20;
inline constexpr size_t kMaxFileFunctionBytes = size_t{1} << 20;
// Resource instances a stack may have in all (count and for_each expanded,
// modules included) unless LoadOptions says otherwise: ten times the
// largest stacks we aim at (100,000 resources), and about 1.5 GB of memory
// to load; past it a typo such as `count: 100000` on thirty resources would
// exhaust memory before any diagnostic.
inline constexpr size_t kDefaultMaxInstances = 1000000;

struct LoadOptions {
  // Directories (every *.yaml / *.yml in them) or files; empty means ".".
  std::vector<std::string> paths;
  bool recursive = false;  // also read subdirectories of directory paths
  // Variable values: default < CAIRN_VAR_<name> < var_files (in order) < vars.
  std::vector<std::string> var_files;
  std::map<std::string, std::string> vars;  // --var name=value
  // Values a saved plan was made with, above all of those (`cairn apply
  // FILE`, which refuses --var and --var-file). One the stack no longer
  // declares, or of another type, is ignored with a warning: the plan itself
  // is applied as saved.
  std::map<std::string, Value> plan_vars;
  // Only the settings (variables, provider, backend), for commands that never
  // look at resources (`cairn state`, `force-unlock`, `drift`): resources and outputs
  // are not read, and a variable without a value is an error only where a
  // setting uses it.
  bool settings_only = false;
  // With settings_only: the backend settings alone, the provider document
  // left unread (`drift --managed-by DIR` reads another stack's state and
  // never calls its API), so a variable only the provider uses needs no value.
  bool backend_only = false;
  // Where files are read, directories walked and environment variables
  // (CAIRN_VAR_*, ${env.NAME}) looked up; null: PosixEnv(), the disk and
  // the process's environment.
  const Env* env = nullptr;
  // When set, environment variables are looked up here instead of `env`.
  std::function<const char*(const char*)> getenv;
  // A directory of *.schema.json to read instead of the schemas built into
  // the binary (SchemaRegistry::Embedded()); for tests. Empty: the built-in ones.
  std::string schema_dir;
  // When set, used instead of loading schema_dir.
  std::shared_ptr<const SchemaRegistry> registry;
  // More resource instances than this are refused (too_many_instances)
  // before any is made: `--max-instances`, CAIRN_MAX_INSTANCES.
  size_t max_instances = kDefaultMaxInstances;
  // `cairn plan --generate-config`: a `kind: import` document whose `to` is
  // a resource of the stack (no module, no index) that no manifest declares
  // is loaded (ImportConfig::declared false) rather than refused
  // (import_to_undeclared): the plan writes its document.
  bool allow_undeclared_imports = false;
  // ${workspace} (engine/state/workspaces.h); the caller checked the name.
  std::string workspace = "default";
  // Called once, on the loading thread, as soon as the settings (variables,
  // provider, backend, watch) are loaded without an error, before anything
  // else (resources, outputs...) is: `config` holds them and the root, and
  // `registry` the schemas. For work that needs only those and can run
  // while the rest loads (EngineSession reads the state and lists the live
  // objects meanwhile). Not called when the load fails before.
  std::function<void(const StackConfig& config,
                     const std::shared_ptr<const SchemaRegistry>& registry)>
      on_settings;
};

struct LoadResult {
  StackConfig config;                   // complete only when ok()
  std::vector<Diagnostic> diagnostics;  // sorted by file, line, column
  SourceFiles sources;                  // every file named by a diagnostic, key material redacted
  std::shared_ptr<const SchemaRegistry> registry;  // null if it could not be loaded
  bool ok() const { return !HasErrors(diagnostics); }
};

LoadResult LoadStack(const LoadOptions& options);

// Loads manifests given as text instead of files (tests, fuzzing): `files`
// maps a file name to its content, read in name order. file() paths resolve
// against the directory part of each file name, as on disk; `root` becomes
// the config's root.
LoadResult LoadStackFromText(const std::map<std::string, std::string>& files,
                             const LoadOptions& options, const std::string& root = ".");

}  // namespace cairn
