// Variable validations, a stage of loading a stack: each variable's
// `validation` list ({condition, error_message}), its shape checked
// (wrong_type, missing_field, unknown_field), then each condition
// evaluated against the value the variable has (by the loader: a
// ValidationEvaluator). A condition known only after apply is not checked;
// one that is not a boolean is invalid_condition; a false one is
// invalid_variable_value, reported where the value came from (the --var
// file line, the module input) with the condition named. The value itself
// is never shown: neither is a message built from a sensitive value, nor a
// sensitive variable's default (its name is pointed at instead).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/variables.h"

namespace cairn {

// A variable whose validations are checked.
struct ValidatedVariable {
  const ManifestDocument* doc = nullptr;  // its declaration
  std::string name;
  SourceLocation location;              // its name
  std::string module;                   // its module instance ("app[0]"); "" for the stack's
  bool has_value = false;               // without one, only the list's shape is checked
  const ValueOrigin* origin = nullptr;  // where the value came from, when known
  bool sensitive = false;
};

// One field of a validation, evaluated.
struct ValidationField {
  Value value;             // in expression form
  bool failed = false;     // an error was reported while evaluating it
  bool sensitive = false;  // it reads a sensitive value
};

// Evaluates `v` (at `node`) in the variable's document; `where` is "a
// validation condition" or "an error message", what may not read resources.
using ValidationEvaluator =
    std::function<ValidationField(const Value& v, const YamlNode& node, const char* where)>;

void CheckVariableValidations(const ValidatedVariable& variable,
                              const ValidationEvaluator& evaluate, std::vector<Diagnostic>& diags);

}  // namespace cairn
