// Private key material in a stack's values: the checks the loader makes so
// that no private key reaches a plan, a state or an excerpt (base/
// private_key.h finds a key in text).
#pragma once

#include <string>
#include <vector>

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

}  // namespace cairn
