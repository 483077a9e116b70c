// Declared instances, a stage of loading a stack: what a resource or a
// module document's `enabled`, `count` or `for_each` declare. Each is
// evaluated by the loader (an InstanceEvaluator: it may read variables,
// locals and the shapes of other resources) and must be known at load:
// which instances exist is decided before anything is planned. The values
// are then expanded (expand.h).
//
// Reported here: enabled beside count or for_each (count_and_for_each), an
// enabled or count or for_each known only after apply (unknown_enabled,
// unknown_count, unknown_for_each: naming the references that make it so),
// an enabled that is not a boolean (invalid_enabled); and what
// ExpandInstances reports. What the evaluator reports is its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/expand.h"

namespace cairn {

// One of a document's enabled, count or for_each, evaluated.
struct InstanceField {
  Value value;  // in expression form
  // It could not be evaluated (reported by the evaluator).
  bool failed = false;
  // The resources it reads, as messages name them ("instance.web[0].id"):
  // they make it known only after apply.
  std::vector<std::string> references;
};

// Evaluates field `key` ("enabled", "count", "for_each") of `doc`, a string.
using InstanceEvaluator =
    std::function<InstanceField(const ManifestDocument& doc, const char* key)>;

// The instances `doc` (a `what`: "resource", "module") declares, in `out`.
// False when they cannot be known (reported); `out.mode` still says whether
// count or for_each was given, so that references to it are checked
// against it.
bool DeclaredInstances(const ManifestDocument& doc, const std::string& what,
                       const InstanceEvaluator& evaluate, Instances& out,
                       std::vector<Diagnostic>& diags);

}  // namespace cairn
