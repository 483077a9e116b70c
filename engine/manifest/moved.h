// Moves, a stage of loading a stack: what the `kind: moved` documents say
// (an address given a new one, so that the state follows a rename instead of
// destroying and creating), checked against the resources the manifests
// declare, and the moves implied by `enabled` after them. Documents and
// declared resources in, moves and diagnostics out.
#pragma once

#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/references.h"

namespace cairn {

struct Moves {
  std::vector<MovedConfig> moved;  // the written ones in order, then the implied ones
  std::vector<Diagnostic> diagnostics;
};

// Whether the manifests declare exactly `addr` (an instance address, or a
// resource without count or for_each when it has no index).
bool Declares(const DeclaredResources& declared, const ResourceAddress& addr);

// The moves of `docs` (moved documents, classified): FROM and TO resource
// addresses of a known kind, of the same kind and not the same, or both
// module paths (a whole module's move); each FROM moved once, gone from
// the manifests, and TO declared there (`modules`: the paths of every
// module instance, and of every call with none). Then each of `implicit`
// whose FROM no written move moves.
Moves LoadMoves(const std::vector<const ManifestDocument*>& docs, const DeclaredResources& declared,
                std::vector<MovedConfig> implicit,
                const std::vector<std::vector<ModuleStep>>& modules = {});

}  // namespace cairn
