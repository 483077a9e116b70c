// Stack data sources, a stage of loading a stack: a `kind: data` document
// of `type: stack` reads the outputs another stack recorded in its state
// (Terraform's terraform_remote_state), as ${data.stack.NAME.outputs.OUT}.
//
// Unlike the other data sources, which the API answers at plan time, these
// are read at load, from the other stack's state: read-only, without
// loading its manifests or taking its lock. Their values are then known
// like a variable's (count, for_each and the provider may use them), and
// an output recorded as sensitive stays sensitive here: the mark follows
// its value to every field and output that uses it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/expr/value.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/settings.h"
#include "engine/state/open_state_store.h"

namespace cairn {

// Where one stack data source reads.
struct StackDataConfig {
  std::string name;
  // The directory the backend's SQLite path is relative to: `dir:`, or the
  // directory of the data document when only `backend:` is given.
  std::string root;
  BackendSpec backend;  // sqlite at <root>/.cairn/state.db unless `backend:` says otherwise
  // `defaults:`: outputs used when the stack has no state yet, or lacks
  // one of them (Terraform's `defaults`).
  std::optional<Value> defaults;
  SourceLocation location;       // the document's
  SourceLocation name_location;  // its `name:` value, where read errors point
};

// The settings of one stack data document: `dir:` (a stack directory,
// relative to the document's), `backend:` (type sqlite with `path`, or type
// postgres with `name` and `url_env`), at least one of the two, and
// `workspace:` (which of its workspaces, default `default`) and `defaults:`
// (a mapping). nullopt when they are not valid (reported).
// `id` and `filter` belong to the other data sources (invalid_value).
std::optional<StackDataConfig> LoadStackData(const ManifestDocument& doc, const EvalSetting& eval,
                                             std::vector<Diagnostic>& diags);

// The outputs of the stack `config` names, as a map of output name to
// value, each output the stack recorded as sensitive marked so
// ("data.stack.NAME.outputs.OUT"); `defaults` fill in what the state lacks.
// A stack with no state and no defaults is stack_not_found, one that cannot
// be read stack_read_failed; nullopt then (reported at the document's name).
std::optional<expr::Value> ReadStackOutputs(const StackDataConfig& config,
                                            std::vector<Diagnostic>& diags);

}  // namespace cairn
