// Removed, a stage of loading a stack: what the `kind: removed` documents
// say (an address the stack no longer manages: forgotten, or deleted),
// checked against what the manifests declare. Documents, declared resources
// and module instances in, removals and diagnostics out.
#pragma once

#include <vector>

#include "base/diagnostic.h"
#include "engine/address.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/references.h"

namespace cairn {

struct Removals {
  std::vector<RemovedConfig> removed;  // the valid ones, in document order
  std::vector<Diagnostic> diagnostics;
};

// The removals of `docs` (removed documents, classified): `from` a resource
// address of a known kind, an instance, or a module path; removed once; not
// declared in the manifests (a resource, or an instance, that the
// manifests declare; a module call any of whose instances or the call
// itself are declared: `modules` holds the paths of every module instance
// and of every call with none); `lifecycle: {destroy: BOOL}`, true when
// not written.
Removals LoadRemovals(const std::vector<const ManifestDocument*>& docs,
                      const DeclaredResources& declared,
                      const std::vector<std::vector<ModuleStep>>& modules);

}  // namespace cairn
