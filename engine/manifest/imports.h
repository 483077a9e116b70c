// Imports, a stage of loading a stack: what the `kind: import` documents say
// (an object of the API to adopt at an address, Terraform 1.5's import
// block, with OpenTofu 1.7's for_each), checked against what the manifests
// declare and remove. The loader evaluates each document's `for_each`, its
// `id` and the expressions among `to`'s indexes (FindImportIndexExpressions)
// for every for_each key; those evaluated instances, the declared resources
// and the removals in, the imports and diagnostics out. Nothing here reads
// the API: the plan reads the objects (engine/operations/import.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/manifest/references.h"

namespace cairn {

// One instance of an import document (one per for_each key), evaluated.
struct ImportInstance {
  std::string to;              // its index expressions replaced by their values
  Value id;                    // as evaluated
  SourceLocation location;     // the `to:` value
  SourceLocation id_location;  // the `id:` value
};

struct Imports {
  std::vector<ImportConfig> imports;  // the valid ones, in order
  std::vector<Diagnostic> diagnostics;
};

// The imports of `instances`: `to` a resource instance address of a known
// kind (not a module path), declared in the manifests, or (with
// `allow_undeclared`) a resource of the stack without index that no
// manifest declares at all; `id` a non-empty string; one import per address
// and per object (kind and id); no address a `removed` document of
// `removed` also names.
Imports LoadImports(const std::vector<ImportInstance>& instances, const DeclaredResources& declared,
                    const std::vector<RemovedConfig>& removed, bool allow_undeclared);

// An index of an import's `to` written as an expression (`instance.web[each.key]`):
// the text between its brackets.
struct ImportIndexExpression {
  size_t begin = 0;  // of the text, in `to`
  size_t size = 0;
  std::string text;  // trimmed
};

// The indexes of `to` that are neither a whole number nor a quoted string
// nor `*`: expressions (`each.key`, `each.value.name`, `local.region`), in
// order. nullopt when a bracket or a quoted string does not close.
std::optional<std::vector<ImportIndexExpression>> FindImportIndexExpressions(std::string_view to);

// `to` with each of `found`'s expressions replaced by the index its value
// (`values`, in the same order) makes: a string `["..."]`, a whole number
// `[n]`. nullopt, with `error` set, when a value is neither.
std::optional<std::string> SubstituteImportIndexes(std::string_view to,
                                                   const std::vector<ImportIndexExpression>& found,
                                                   const std::vector<Value>& values,
                                                   std::string& error);

}  // namespace cairn
