// Where things are in a manifest's YAML: a mapping's key and value, and the
// node a JSON pointer into a document's value leads to, for diagnostics
// about values that were read from those nodes.
#pragma once

#include <string>
#include <utility>

#include "base/diagnostic.h"
#include "engine/manifest/yaml_tree.h"

namespace cairn {

// "file:line:col", or the file alone when the location has no position.
std::string LocationText(const SourceLocation& l);

// `key` as one token of a JSON pointer ("~" and "/" escaped).
std::string PointerToken(const std::string& key);

// The value of key `key` in mapping `map`; undefined when there is none.
YamlNode ChildNode(const YamlNode& map, const std::string& key);

// Location of the key `key` in mapping `map`, or of the mapping.
SourceLocation KeyLoc(const std::string& file, const YamlNode& map, const std::string& key);

// The deepest node that exists on the way from `base` along a JSON
// pointer, and the key node of the pointer's last step when it exists.
std::pair<YamlNode, YamlNode> Descend(YamlNode base, const std::string& pointer);

// The location of the node at a JSON pointer below `base` (the deepest one
// that exists), or of its key with `at_key` when the last step is there.
SourceLocation Locate(const std::string& file, YamlNode base, const std::string& pointer,
                      bool at_key);

}  // namespace cairn
