// Validating specs, a stage of loading a stack: each resource instance's
// spec, fully evaluated, against its kind's schema (base/schema), and
// checked for private key material that arrived through a variable or a
// for_each value. Resources and where their specs were written in, the
// diagnostics out, in resource order; nothing is changed.
#pragma once

#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

class SchemaRegistry;

// Where one resource instance's spec was written. Views: what they point at
// outlives the call.
struct SpecSource {
  std::string_view file;       // the document's file
  YamlNode document;           // the resource document
  SourceLocation document_at;  // where a problem of the whole document points (its kind)
  YamlNode spec;               // its `spec:` value, or `document` when it has none
  // The file was refused for holding key material, reported once already:
  // the spec is not scanned for keys again.
  bool keyed_file = false;
};

// The problems of each spec (`resources[i]` written at `sources[i]`):
// schema violations at the spec node a pointer leads to (the `spec:` key
// for the whole spec, `document_at` when there is no spec), and
// private_key_material for a string holding a key. Stacks of 512 resources
// or more are validated on several threads, thread t taking resources t,
// t+T, t+2T...: the diagnostics are thread 0's, then thread 1's, and so on.
std::vector<Diagnostic> ValidateSpecs(const std::vector<ResourceConfig>& resources,
                                      const std::vector<SpecSource>& sources,
                                      const SchemaRegistry& registry);

}  // namespace cairn
