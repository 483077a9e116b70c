// From YAML text to values, the first stage of loading a manifest: plain
// scalars take the YAML 1.2 core schema's types, quoted ones stay strings,
// and every problem (a NUL byte or bytes that are not UTF-8, a syntax error,
// a key that is not a plain string, a repeated key, a document too deep or
// too large, as aliases can make it) is a diagnostic at its file:line:col.
// `cairn fmt` applies the same checks of the text and the same bounds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

// Guards against hostile YAML (deep nesting, alias bombs): a document's
// nodes are counted as a walk meets them, each alias as often as it is
// used, so that what aliases expand to is bounded before it is built.
inline constexpr int kMaxYamlDepth = 64;
inline constexpr size_t kMaxNodesPerDocument = 100000;

// The problems of `tree`, parsed from file `file`, that are in its text
// rather than its values: each run of NUL bytes (nul_byte) or of bytes that
// are not UTF-8 (invalid_utf8), at its first byte, and the syntax error
// (yaml_syntax). With the file's `text`, a syntax error inside an unquoted
// "${...}" says to quote the value.
void AddTextDiagnostics(const std::string& file, const YamlTree& tree, std::vector<Diagnostic>& out,
                        std::string_view text = {});

// Whether document `root` is within the bounds above, the same bounds
// YamlToValue applies as it goes, checked without building anything: false,
// with document_too_deep or document_too_large appended to `out`, when not.
// Stops at the first node over them, so it takes time bounded by
// kMaxNodesPerDocument whatever aliases the document holds.
bool DocumentWithinBounds(const std::string& file, const YamlNode& root,
                          std::vector<Diagnostic>& out);

// `s` with every byte that is not valid UTF-8 replaced (U+FFFD).
std::string ValidUtf8(const std::string& s);

// Where `n` is in `file` (its length too, for a one-line scalar).
SourceLocation NodeLoc(const std::string& file, const YamlNode& n);

// Each key of mapping `node` that is not in `allowed`, as unknown_field
// ("unknown key "K" in WHAT", with a "did you mean"); false when there was
// one. For the documents read as YAML rather than values (policies, tests).
bool CheckYamlKeys(const std::string& file, const YamlNode& node,
                   const std::vector<std::string>& allowed, const std::string& what,
                   std::vector<Diagnostic>& out);

// A plain (unquoted) scalar as the core schema types it: null, a boolean,
// an integer (decimal, 0x hex, 0o octal), a finite number, or the text.
Value PlainScalar(const std::string& s);

// The value of node `n` (at nesting `depth`), counting nodes in `budget`
// across one document (above kMaxNodesPerDocument once it is over the
// bounds); problems are appended to `out`.
Value YamlToValue(const std::string& file, const YamlNode& n, int depth, size_t& budget,
                  std::vector<Diagnostic>& out);

}  // namespace cairn
