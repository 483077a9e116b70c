// Condition lists, a stage of loading a stack: a list of {condition,
// error_message} read, as a resource's lifecycle precondition and
// postcondition, an output's precondition and a check's assert all are.
// Its shape is checked (wrong_type, missing_field, unknown_field); each
// item is evaluated by the loader (a ConditionEvaluator: what it may read
// depends on where the list is); a condition known at load must be a
// boolean (invalid_condition), one known only at plan or apply is kept as
// a residual. A message built from a sensitive value is never printed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"

namespace cairn {

// One item evaluated, in expression form.
struct EvaluatedCondition {
  Value condition;
  Value error_message;
  bool failed = false;             // the evaluator reported an error
  bool message_sensitive = false;  // the message reads a sensitive value
};

// Evaluates `item` (an object with condition and error_message), whose
// node is `item_node`.
using ConditionEvaluator =
    std::function<EvaluatedCondition(const Value& item, const YamlNode& item_node)>;

// The conditions of list `list` (node `node`) under `key` ("precondition",
// "assert", ...) of `doc`; an item with a mistake is left out.
std::vector<ConditionConfig> LoadConditionList(const ManifestDocument& doc, const Value& list,
                                               const YamlNode& node, const std::string& key,
                                               const ConditionEvaluator& evaluate,
                                               std::vector<Diagnostic>& diags);

}  // namespace cairn
