// Document lists, a step of loading a stack between classifying documents
// (documents.h) and the stages that read them: each classified document
// enlisted by its kind, so that every later stage reads the documents of
// its kinds only. Variables, locals and module calls are listed in their
// scope (module_scopes.h), as each scope declares its own; documents of a
// scope that is not used (a module call with no instance) are not listed:
// they were checked when classified, and nothing is loaded from them.
#pragma once

#include <vector>

#include "engine/manifest/documents.h"
#include "engine/manifest/module_scopes.h"

namespace cairn {

class SchemaRegistry;

// Indexes into the loader's documents, in the order enlisted.
struct DocumentLists {
  std::vector<size_t> resources;  // of every kind the registry has
  std::vector<size_t> outputs, checks, providers, backends, moved, removed, imports, data, watches;
};

// Enlists document `i`, `doc` (classified: its kind set), of scope
// `doc.scope` of `scopes`.
void EnlistDocument(size_t i, const ManifestDocument& doc, const SchemaRegistry& registry,
                    DocumentLists& lists, ModuleScopes& scopes);

}  // namespace cairn
