// The dependency graph of a loaded stack, printed for people and tools:
// Graphviz DOT (nodes labelled by address, filled with a colour per kind,
// the resources of each module instance in a cluster of its own) and JSON. Both list nodes in the
// stack's topological order and edges from a resource to what it depends on; output is
// deterministic.
#pragma once

#include <string>
#include <vector>

#include "engine/manifest/config.h"

namespace cairn {

// `kinds` fixes the colour of each kind (its position in the list), so a
// kind keeps its colour across stacks; pass SchemaRegistry::kinds().
std::string GraphToDot(const StackConfig& config, const std::vector<std::string>& kinds);

// {"nodes": [{"address", "kind", "name", "index"?, "module"?}],
//  "edges": [{"from", "to"}],
//  "order": ["address", ...]}
std::string GraphToJson(const StackConfig& config);

}  // namespace cairn
