// From YAML nodes to values, the first stage of loading a manifest: plain
// scalars take the YAML 1.2 core schema's types, quoted ones stay strings,
// and every problem (invalid UTF-8, a key that is not a plain string, a
// repeated key, a document too deep or too large, as aliases can make it)
// is a diagnostic at the node's file:line:col.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

// Guards against hostile YAML (deep nesting, alias bombs).
inline constexpr int kMaxYamlDepth = 64;
inline constexpr size_t kMaxNodesPerDocument = 100000;

// `s` with every byte that is not valid UTF-8 replaced (U+FFFD).
std::string ValidUtf8(const std::string& s);

// Where `n` is in `file` (its length too, for a one-line scalar).
SourceLocation NodeLoc(const std::string& file, const YamlNode& n);

// A plain (unquoted) scalar as the core schema types it: null, a boolean,
// an integer (decimal, 0x hex, 0o octal), a finite number, or the text.
Value PlainScalar(const std::string& s);

// The value of node `n` (at nesting `depth`), counting nodes in `budget`
// across one document; problems are appended to `out`.
Value YamlToValue(const std::string& file, const YamlNode& n, int depth, size_t& budget,
                  std::vector<Diagnostic>& out);

}  // namespace cairn
