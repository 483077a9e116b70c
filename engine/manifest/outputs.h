// Outputs and checks, a stage of loading a stack: `kind: output` and
// `kind: check` documents of every scope (module_scopes.h), declared
// (duplicate_output, duplicate_check, missing_field, a `sensitive` that is
// not a boolean) before the loader evaluates their values and conditions;
// and the rule that an output built from a sensitive value must say
// `sensitive: true` (output_not_sensitive), as Terraform's does: the mark
// follows the value whatever the declaration says, and the output is then
// sensitive wherever it is shown or read. For module outputs the rule is
// applied once every output is loaded, up through nested modules
// (MarkOutputsOfSensitiveOutputs).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/module_scopes.h"

namespace cairn {

// An output document as declared, before its value is evaluated.
struct OutputDeclaration {
  OutputConfig output;  // its name, location and declared sensitivity
  // Its `sensitive`, when given, is a boolean: only then is a missing
  // `sensitive: true` reported.
  bool valid_sensitive = true;
};

// Output document `doc`, `key` its name with its scope's prefix; `first`
// holds where each key was declared first. nullopt when it is declared
// twice or has no value (reported).
std::optional<OutputDeclaration> DeclareOutput(const ManifestDocument& doc, const std::string& key,
                                               std::map<std::string, SourceLocation>& first,
                                               std::vector<Diagnostic>& diags);

// Check document `doc`, `name` its name with its scope's prefix: its name
// and location, its asserts left for the loader to evaluate; nullopt when
// declared twice or without assert (reported).
std::optional<CheckConfig> DeclareCheck(const ManifestDocument& doc, const std::string& name,
                                        std::map<std::string, SourceLocation>& first,
                                        std::vector<Diagnostic>& diags);

// Output `doc` is built from `what` ("sensitive variable \"pw\"") but not
// declared sensitive.
void RefuseUndeclaredSensitive(const ManifestDocument& doc, const std::string& what,
                               std::vector<Diagnostic>& diags);

// An output built from a module's sensitive output is sensitive, and must
// be declared so, like one built from a sensitive variable: `outputs` (of
// every scope, `docs[i]` the document of outputs[i], `scopes[s].outputs`
// indexes into it) marked until nothing changes, so that the mark goes up
// through nested modules. A module output reference that names no output
// is skipped (reported where it is written).
void MarkOutputsOfSensitiveOutputs(std::vector<OutputConfig>& outputs,
                                   const std::vector<const ManifestDocument*>& docs,
                                   const ModuleScopes& scopes, std::vector<Diagnostic>& diags);

}  // namespace cairn
