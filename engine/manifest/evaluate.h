// Evaluation, a stage of loading a stack: one manifest string's `${...}`
// evaluated by the expression language (engine/expr) in the scope of the
// document it is written in. What the string may read comes in through
// EvalInputs (variables, locals, count and each, files, the environment,
// the shapes of the declared resources); out come its value in expression
// form (engine/manifest/expr.h: the value where it is known, the residual
// expression where it waits for a resource), the references it makes, its
// sensitive mark, and diagnostics at the exact sub-expression.
//
// A value assembled here that holds private key material (pieces of a key
// in variables, say) is refused: no single input held it, so only the
// result can show it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/address.h"
#include "engine/expr/ast.h"
#include "engine/expr/value.h"
#include "engine/manifest/expand.h"
#include "engine/manifest/expr.h"

namespace cairn {

// How a declared resource expands, for expressions that use it whole
// (`length(instance.web)`, `instance.web[*].id`, `keys(instance.node)`).
struct ResourceShape {
  Instances::Mode mode = Instances::Mode::kSingle;
  std::vector<AddressIndex> indexes;  // its instances, in order
  // Its attributes (spec fields and computed ones): an instance used whole
  // is an object of these, each known after apply.
  const std::vector<std::string>* attributes = nullptr;
};

// A local's value: known, or a residual to put in its place.
struct LocalValue {
  expr::Value value;
  expr::NodePtr residual;  // when `value` is not wholly known
};

// Parses of strings already seen, for EvaluateString: the instances of a
// `count` or `for_each`, and resources written alike, share their text.
// Bounded: two generations of at most `generation` strings each; a string
// found in the older moves to the newer, and when the newer is full the
// older is dropped. Unbounded, it kept every string's tree to the end of
// the load, though most of a large stack's strings (names, references to
// one network) are each evaluated once: an eighth of what loading
// 100,000 resources held at its peak.
class ParseCache {
 public:
  explicit ParseCache(size_t generation = 4096) : generation_(generation) {}
  // The tree parsed from `text`, or null.
  expr::NodePtr Find(const std::string& text);
  void Add(const std::string& text, expr::NodePtr tree);
  size_t size() const { return young_.size() + old_.size(); }

 private:
  size_t generation_;
  std::unordered_map<std::string, expr::NodePtr> young_, old_;
};

// What the expressions of one string may read.
struct EvalInputs {
  // ${var.NAME}: its value in expression form, or nullopt when it has none
  // (the callee reports why, at `at`, or knows it was reported already).
  std::function<std::optional<Value>(const std::string& name, const SourceLocation& at)> variable;
  // Whether ${var.NAME}'s value is sensitive. Unset: none is.
  std::function<bool(const std::string& name)> variable_sensitive;
  // Whether ${var.NAME}'s value is ephemeral (marked as EphemeralOrigin
  // says). Unset: none is.
  std::function<bool(const std::string& name)> variable_ephemeral;
  // ${local.NAME}: its value, or nullopt (the callee reports why).
  std::function<std::optional<LocalValue>(const std::string& name, const SourceLocation& at)> local;
  // ${env.NAME}: the environment variable, or null when unset.
  std::function<const char*(const char*)> getenv;
  // file(PATH) and the other file functions: the file's text, its final
  // newlines removed, or nullopt when it cannot be read (the callee reports
  // why). file_exists: whether PATH is a regular file.
  std::function<std::optional<std::string>(const std::string& path, const SourceLocation& at)>
      read_file;
  std::function<bool(const std::string& path)> file_exists;
  // path.module and path.root; null: ".".
  const std::string* path_module = nullptr;
  const std::string* path_root = nullptr;
  // ${workspace}: the workspace the stack is loaded for; null: "default".
  const std::string* workspace = nullptr;
  // The instance being evaluated: count.index, each.key, each.value (in
  // expression form).
  std::optional<int> count_index;
  const std::string* each_key = nullptr;
  const Value* each_value = nullptr;
  // Whether resource and module output references may appear; when not,
  // `where` ("count", "provider"...) names the field in the refusal.
  bool resource_refs = false;
  const char* where = "this field";
  // A postcondition: `self` (and self.ATTR) is the resource as the API
  // returned it, known only after apply.
  bool allow_self = false;
  // The module instance the string is written in (empty: the stack).
  std::vector<ModuleStep> module;
  // The shape of a declared resource by its base address
  // ("module.a.instance.web"), or null when it is not known (yet).
  std::function<const ResourceShape*(const std::string& base)> shape;
  // Set to evaluate a residual again (text the loader wrote: references
  // qualified from the stack's root) with the module outputs it names put
  // in place: an output's value in expression form, or nullopt when it has
  // none (reported elsewhere). Every reference found is then `derived`.
  std::function<std::optional<Value>(const std::vector<ModuleStep>& module,
                                     const std::string& output)>
      module_output;
  // ${data.stack.NAME...}: the outputs stack data source NAME read
  // (stack_data.h: a map, sensitive ones marked), or null when there is
  // none or it could not be read (the callee reports why, at `at`, or knows
  // it was reported). Unset: such references are unknown.
  std::function<const expr::Value*(const std::string& name, const SourceLocation& at)>
      stack_outputs;
  // Parses of strings already seen (many instances share their text); may
  // be null.
  ParseCache* parsed = nullptr;
};

// A reference to a resource or a module output, qualified with its module.
struct FoundReference {
  Expression expr;
  SourceLocation location;
  bool exact = false;  // the whole string is this one reference
  // It arrived through a variable or local whose value waits for it:
  // reported where it was written, it only joins the graph here.
  bool derived = false;
};

struct Evaluated {
  Value value;
  // An expression could not be evaluated (reported): `value` is the text
  // as written.
  bool failed = false;
  std::vector<FoundReference> references;  // in the order met
  // The sensitive mark: where the sensitivity came from ("var.pw",
  // "sensitive()"), in the order first met. Empty: not sensitive.
  std::vector<std::string> sensitive;
  // The value assembled holds private key material (reported; `failed` is
  // set and `value` is the text as written, so the key goes no further).
  bool private_key = false;
};

// Evaluates `text`. `locate(offset, length)` is where bytes of `text` are in
// its manifest.
Evaluated EvaluateString(const std::string& text, const EvalInputs& in,
                         const std::function<SourceLocation(size_t, size_t)>& locate,
                         std::vector<Diagnostic>& diags);

// The first ephemeral origin (expr::IsEphemeralOrigin) among `marks` ("var.pw"), or "" when none
// is.
std::string EphemeralSource(const std::vector<std::string>& marks);

// `v` with every string in it escaped as template text, so that a value
// from a variable, a file or a for_each is never read as an expression.
Value EscapeTemplateValue(const Value& v);

// A name ${env.NAME} may read: letters, digits and '_', not starting with
// a digit.
bool IsEnvName(std::string_view s);

}  // namespace cairn
