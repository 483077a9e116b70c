// A resource document's lifecycle and depends_on, a stage of loading a
// stack: read from the document as written (neither is evaluated), each
// address qualified with the module instance the document is declared in.
// What the addresses name is resolved once every resource is known
// (graph_edges.h); preconditions and postconditions are evaluated per
// instance by the loader. Document in, values and diagnostics out.
#pragma once

#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "engine/address.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"

namespace cairn {

class SchemaRegistry;

// `doc`'s `lifecycle:` (it has one): prevent_destroy and
// create_before_destroy booleans, ignore_changes spec fields of its kind
// (invalid_ignore_changes), replace_triggered_by addresses of its own
// module (ADDRESS or ADDRESS.ATTR: invalid_replace_trigger), nothing else
// (unknown_field).
Lifecycle LoadLifecycle(const ManifestDocument& doc, const SchemaRegistry& registry,
                        const std::vector<ModuleStep>& module, std::vector<Diagnostic>& diags);

// `doc`'s `depends_on:` (it has one): a list of resource addresses of its
// own module (invalid_depends_on; module_internal_reference for one inside
// another module), each with where it is written.
std::vector<std::pair<ResourceAddress, SourceLocation>> LoadDependsOn(
    const ManifestDocument& doc, const std::vector<ModuleStep>& module,
    std::vector<Diagnostic>& diags);

}  // namespace cairn
