// Documents, the stage of loading a stack after reading its files: each
// manifest file parsed (files in parallel) into YAML trees and values, with
// its key material refused and hidden from the sources, and each document
// classified: its kind one the schemas or the language declare, its name
// valid, its top-level keys known. Files in, documents and diagnostics out;
// the loader sorts the classified documents by kind.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/read_files.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

class SchemaRegistry;

// One YAML document of a manifest that is a mapping.
struct ManifestDocument {
  std::string file;  // display name
  std::string dir;   // directory for file() and a module's source
  YamlNode node;
  Value value;
  // Set by ClassifyDocument: empty when the document is not valid.
  std::string kind;
  std::string name;
  SourceLocation location;  // the `kind:` value node (the document's without one)
  size_t scope = 0;         // the loader's scope: 0 is the stack itself, else a module instance
};

struct Documents {
  std::vector<std::string> files;                // the files, in order
  std::vector<ManifestDocument> docs;            // their mapping documents, in order, unclassified
  std::vector<std::unique_ptr<YamlTree>> trees;  // what the documents' nodes point into
  std::set<std::string> keyed_files;             // files refused for holding private key material
  std::vector<Diagnostic> diagnostics;           // file by file
};

// Parses `files` and adds each to `sources`, key material redacted. A file
// holding a key (in its text, or spelt with YAML escapes in a scalar) is
// reported once (private_key_material) and still read, so that all its
// problems are reported at once. Also reported: the YAML's own problems
// (yaml_value.h) and a document that is not a mapping (invalid_document).
// A document over the bounds of yaml_value.h is left out.
Documents ParseDocuments(const ManifestFiles& files, SourceFiles& sources);

// The kinds a document may have: the registry's and the language's, sorted.
std::vector<std::string> DocumentKinds(const SchemaRegistry& registry);

// Sets `doc`'s kind, name and location, checking them and its keys
// (missing_field, wrong_type, unknown_kind, not_in_module for a stack-only
// kind in a module, invalid_name, unknown_field); `kinds` is
// DocumentKinds(registry). False when the document is not valid (its kind
// left empty); unknown keys are reported but leave it valid.
bool ClassifyDocument(ManifestDocument& doc, const SchemaRegistry& registry,
                      const std::vector<std::string>& kinds, std::vector<Diagnostic>& diags);

}  // namespace cairn
