// Variable files, the part of the variables stage that reads: each
// --var-file's `name: value` entries (variables.h takes them from there),
// its text added to the sources, refused if it holds private key material,
// and a sensitive variable's value hidden from every excerpt.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/variables.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

class Env;

// The entries of the variable file `path` (read through `env`, at most
// kMaxManifestFileBytes), in order. Only a declared variable's value is
// read: an undeclared one is a warning of the variables stage, whatever its
// value holds. Problems (an unreadable file, YAML, key material, a document
// that is not a mapping: invalid_document) go to `diags`.
std::vector<VariableFileEntry> ReadVariableFile(const Env& env, const std::string& path,
                                                const std::map<std::string, VariableDecl>& decls,
                                                SourceFiles& sources,
                                                std::vector<Diagnostic>& diags);

// `value`'s text in `file` shown as [REDACTED] in every excerpt, however
// short (the redactor ignores short secrets) and whatever its type: a
// diagnostic about it (a value of the wrong type) points at it, and --var
// and CAIRN_VAR_ values are never shown either.
void HideValueText(SourceFiles& sources, const std::string& file, const YamlNode& value);

}  // namespace cairn
