// Data sources, a stage of loading a stack: what each `kind: data` document
// reads (an existing resource of a kind the schemas declare, by id or by a
// filter on its name and region), to be read at plan time and referred to
// as ${data.KIND.NAME.ATTR}. Documents in, data sources and diagnostics out;
// `id` and `filter` are evaluated by the caller's `eval` (settings.h),
// whose diagnostics go to the same list.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/settings.h"

namespace cairn {

class SchemaRegistry;

struct DataSources {
  std::vector<DataConfig> data;  // the valid ones, in document order
  // "data.KIND.NAME" of every one declared once with a known kind, valid
  // or not, for references to resolve against (graph_edges.h).
  std::set<std::string> addresses;
  // The documents of `type: stack`, declared once: the loader reads them
  // (stack_data.h), at load rather than at plan.
  std::vector<const ManifestDocument*> stacks;
};

// The data sources of `docs` (data documents, classified): type a known
// kind (or `stack`, whose settings stack_data.h reads), declared once, read by id (a non-empty
// string) or by a filter (name and/or region, as strings), not both.
DataSources LoadDataSources(const std::vector<const ManifestDocument*>& docs,
                            const SchemaRegistry& registry, const EvalSetting& eval,
                            std::vector<Diagnostic>& diags);

}  // namespace cairn
