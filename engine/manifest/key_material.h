// Private key material, a concern of every stage of loading a stack: the
// checks the loader makes so that no private key reaches a plan, a state, a
// message or an excerpt (base/private_key.h finds a key in text), and the
// hiding of the text that holds one from the sources excerpts are cut from.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

// The scalars of `tree` whose value, escapes undone, holds private key
// material: the text check misses a key spelt with YAML escapes ("\x2D...").
std::vector<YamlNode> ScalarsHoldingKeys(const YamlTree& tree);

// Whether some string of `v` holds a key's armour ("PRIVATE KEY-----"): a
// cheap test before KeyPointers.
bool MayHoldKey(const Value& v);

// The JSON pointers (below `pointer`) of the strings of `v` holding a
// private key, appended to `out` in document order.
void KeyPointers(const Value& v, const std::string& pointer, std::vector<std::string>& out);

// ---- hiding what holds a key -------------------------------------------------
// The lines of `node`'s text in `file` (1-based, first and last): from its
// mark to the line before the next node's, or to that line when the node's
// text goes on there (a flow collection, a quoted scalar closing before a
// following key). Without a next node, to the end of the file.
std::pair<int, int> NodeLines(SourceFiles& sources, const std::string& file, const YamlNode& node);

// Hides `node`'s lines (NodeLines) from every excerpt of `file`.
void RedactNode(SourceFiles& sources, const std::string& file, const YamlNode& node);

// Hides key material from every output: the scalars' lines from excerpts,
// and each line of the key itself (registered with the redactor) from any
// message that would quote the value, such as an invalid name's.
void HideKeyScalars(SourceFiles& sources, const std::string& file,
                    const std::vector<YamlNode>& scalars);

// Refuses the scalars of `file` found to hold key material: hidden (see
// HideKeyScalars), and the first one reported (private_key_material). True
// if any.
bool RefuseKeyScalars(SourceFiles& sources, const std::string& file,
                      const std::vector<YamlNode>& scalars, std::vector<Diagnostic>& diags);

// Adds `content` to the sources (key material redacted) and refuses it
// (private_key_material at the key) if it holds a private key: a manifest
// or variable file, or, with `read_at`, a file read by file() there.
// Returns false when it does.
bool AddSourceRefusingKeys(SourceFiles& sources, const std::string& display,
                           const std::string& content, const SourceLocation* read_at,
                           std::vector<Diagnostic>& diags);

}  // namespace cairn
