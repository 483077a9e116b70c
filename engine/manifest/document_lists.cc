#include "engine/manifest/document_lists.h"

#include "base/schema/schema_registry.h"

namespace cairn {

void EnlistDocument(size_t i, const ManifestDocument& doc, const SchemaRegistry& registry,
                    DocumentLists& lists, ModuleScopes& scopes) {
  ModuleScope& scope = scopes[doc.scope];
  if (scope.unused) return;
  if (registry.HasKind(doc.kind)) lists.resources.push_back(i);
  if (doc.kind == "variable") scope.variable_docs.push_back(i);
  if (doc.kind == "local") scope.local_docs.push_back(i);
  if (doc.kind == "module") scope.module_docs.push_back(i);
  if (doc.kind == "output") lists.outputs.push_back(i);
  if (doc.kind == "check") lists.checks.push_back(i);
  if (doc.kind == "provider") lists.providers.push_back(i);
  if (doc.kind == "backend") lists.backends.push_back(i);
  if (doc.kind == "moved") lists.moved.push_back(i);
  if (doc.kind == "removed") lists.removed.push_back(i);
  if (doc.kind == "import") lists.imports.push_back(i);
  if (doc.kind == "data") lists.data.push_back(i);
  if (doc.kind == "watch") lists.watches.push_back(i);
}

}  // namespace cairn
