// Evaluation, a stage of loading a stack: the expressions of one manifest
// string substituted. Variables, environment variables, file(), count.index
// and each.key/each.value become values; references to resources and to
// module outputs are kept as "${...}" for the plan and apply, qualified
// with the module instance they are written in, and returned so that the
// loader can check them and add them to the graph. Values in (through
// EvalInputs), a value, its references, its sensitive mark and diagnostics
// out. A value assembled here that holds private key material (pieces of a
// key in variables, say) is refused: no single input held it, so only the
// result can show it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/address.h"
#include "engine/manifest/expr.h"

namespace cairn {

// What the expressions of one string may read.
struct EvalInputs {
  // ${var.NAME}: its value in template form (text escaped, see
  // EscapeTemplateValue), or nullopt when it has none (the callee reports
  // why, at `at`, or knows it was reported already).
  std::function<std::optional<Value>(const std::string& name, const SourceLocation& at)> variable;
  // Whether ${var.NAME}'s value is sensitive: a value built from it is
  // marked sensitive (Evaluated::sensitive). Unset: none is.
  std::function<bool(const std::string& name)> variable_sensitive;
  // ${env.NAME}: the environment variable, or null when unset.
  std::function<const char*(const char*)> getenv;
  // ${file("PATH")}: the file's text, its final newlines removed, or
  // nullopt when it cannot be read (the callee reports why).
  std::function<std::optional<std::string>(const std::string& path, const SourceLocation& at)>
      read_file;
  // The instance being evaluated: count.index, each.key, each.value.
  std::optional<int> count_index;
  const std::string* each_key = nullptr;
  const Value* each_value = nullptr;
  // Whether resource and module output references may appear; when not,
  // `where` ("count", "provider"...) names the field in the refusal.
  bool resource_refs = false;
  const char* where = "this field";
  // The module instance the string is written in (empty: the stack).
  std::vector<ModuleStep> module;
};

// A reference to a resource or a module output, qualified.
struct FoundReference {
  Expression expr;
  SourceLocation location;
  bool exact = false;  // the whole string is this one expression
};

struct Evaluated {
  Value value;
  // An expression could not be evaluated (reported): `value` is the text
  // as written.
  bool failed = false;
  std::vector<FoundReference> references;  // in the order written
  // The sensitive mark: the sensitive variables the value is built from,
  // in the order first read. Empty: the value is not sensitive (as far as
  // this string goes; references are marked where they are resolved).
  std::vector<std::string> sensitive;
  // The value assembled holds private key material (reported; `failed` is
  // set and `value` is the text as written, so the key goes no further).
  bool private_key = false;
};

// Evaluates `text`. `locate(offset, length)` is where bytes of `text` are in
// its manifest. A string that is one expression takes that expression's
// value (a list stays a list); otherwise the values are interpolated as
// text, and a list or mapping there is an error.
Evaluated EvaluateString(const std::string& text, const EvalInputs& in,
                         const std::function<SourceLocation(size_t, size_t)>& locate,
                         std::vector<Diagnostic>& diags);

// `v` with every string in it escaped as template text, so that a value
// from a variable, a file or a for_each is never read as an expression.
Value EscapeTemplateValue(const Value& v);

// A name ${env.NAME} may read: letters, digits and '_', not starting with
// a digit.
bool IsEnvName(std::string_view s);

}  // namespace cairn
