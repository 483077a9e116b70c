// The one evaluator of the expression language: a tree (ast.h) and a Scope
// in, a value (value.h) and errors out. The loader, plan, apply, outputs
// and `cairn console` all evaluate through it; they differ only in their
// Scope, which says what names mean where the expression is written.
//
// Semantics are Terraform's (docs/manifests.md, "Expressions"):
// - Operands convert as HCL converts them: arithmetic and comparisons take
//   numbers (a string holding a number converts), && || ! take bools, ==
//   and != compare type and value without converting.
// - Unknown in, unknown out, except where the result is known anyway: a
//   conditional whose condition is known takes one branch (the other is
//   still checked), `false && x` is false, `true || x` is true, and a
//   function may say it handles unknown arguments (length() of a list of
//   unknowns is known).
// - Sensitive in, sensitive out: every operator, function, template, for
//   and index gives a result carrying the marks of what it read.
// - Integer arithmetic that would overflow 64 bits is an error, not a
//   rounded result.
//
// References. A name chain is resolved through the Scope in pieces, so that
// a scope sees exactly what is read (and can record the dependency):
// `var.x`, `local.x`, `count.index`, `each.key`, `each.value`, `path.module`
// and `self.x` through Scope::Named; `KIND.NAME`, `KIND.NAME[KEY]`,
// `KIND.NAME[KEY].ATTR` and `data.KIND.NAME...` through Scope::Resource,
// with the key already evaluated (so `instance.node[each.key].id` reads one
// instance); `module.NAME[KEY].OUTPUT` through Scope::Module. A resource
// inside a module is written `resource["module.app[0].network.main"]` by
// the loader when it keeps such a reference for later (Residual); users
// cannot write that form (EvalOptions::qualified_refs).
//
// Residual(node): the expression again with every part that is known
// replaced by its value, for what must wait until apply: the loader keeps
// `network.main.id` but writes the value of `var.prefix` into
// `"${var.prefix}-${network.main.id}"`.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/expr/ast.h"
#include "engine/expr/value.h"

namespace cairn::expr {

// A problem found while evaluating, at bytes [begin, end) of the text the
// tree was parsed from. `code` is the diagnostic code (docs/manifests.md).
struct EvalError {
  std::string code;
  std::string message;
  std::string detail;
  uint32_t begin = 0;
  uint32_t end = 0;
};

class Evaluator;

// What names mean where an expression is written. Each method reports its
// own problems with ev.Error(at, ...) and returns Unknown after one.
class Scope {
 public:
  virtual ~Scope() = default;

  // A root name the scope binds to a value itself (templatefile()'s
  // variables); nullopt for the usual roots.
  virtual std::optional<Value> Root(const std::string& name) {
    (void)name;
    return std::nullopt;
  }

  // The names Root() binds in every expression (the loader's `workspace`),
  // for "did you mean" when a name alone is none of them.
  virtual std::vector<std::string> ValueRootNames() const { return {}; }

  // `root.attr` for root var, local, count, each, path, self, terraform,
  // env (Cairn's: an environment variable).
  virtual Value Named(const std::string& root, const std::string& attr, const Node& at,
                      Evaluator& ev);

  // A resource: `kind` ("network", "data.network") and `name`, in the
  // module `module` ("" for the stack; "module.app[0]" when the loader
  // qualified it). `key`: the instance's index or key, null when none was
  // written. `attr`: the attribute read, null for the whole object. The
  // resource itself (key and attr null) is a list (count), a map
  // (for_each) or, without either, its one instance's object.
  virtual Value Resource(const std::string& module, const std::string& kind,
                         const std::string& name, const Value* key, const std::string* attr,
                         const Node& at, Evaluator& ev);

  // `KIND.NAME[*].ATTR`: the attribute of every instance, as a list; null
  // (the default) to read the resource whole and take the attribute of each
  // element. Lets a scope check the attribute once for all instances.
  virtual std::optional<Value> ResourceSplat(const std::string& module, const std::string& kind,
                                             const std::string& name, const std::string& attr,
                                             const Node& at, Evaluator& ev) {
    (void)module, (void)kind, (void)name, (void)attr, (void)at, (void)ev;
    return std::nullopt;
  }

  // `module.NAME`, `module.NAME[KEY]`, `module.NAME[KEY].OUTPUT`: `key` and
  // `output` null when not written. In text the loader wrote, `name` may be a
  // whole module instance path instead, "module.app[0].module.db"
  // (module["module.app[0].module.db"].OUTPUT), with `key` null. The module itself is an object of
  // its outputs (or a list or map of them with count or for_each).
  virtual Value Module(const std::string& name, const Value* key, const std::string* output,
                       const Node& at, Evaluator& ev);

  // What Residual() writes for a reference the evaluation found unknown:
  // the same reference (nullptr: keep the node as written) or what it
  // stands for (a variable's expression, a module output's). Scopes that
  // never leave residuals need not override these.
  virtual NodePtr ResidualNamed(const std::string& root, const std::string& attr, const Node& at) {
    (void)root, (void)attr, (void)at;
    return nullptr;
  }
  virtual NodePtr ResidualResource(const std::string& module, const std::string& kind,
                                   const std::string& name, const Value* key,
                                   const std::string* attr, const Node& at) {
    (void)module, (void)kind, (void)name, (void)key, (void)attr, (void)at;
    return nullptr;
  }
  virtual NodePtr ResidualModule(const std::string& name, const Value* key,
                                 const std::string* output, const Node& at) {
    (void)name, (void)key, (void)output, (void)at;
    return nullptr;
  }

  // file(), fileexists(), filebase64(), templatefile(): read `path`
  // (relative to the manifest's directory), or report why not at `at` and
  // return nullopt. The default refuses: files are read only at load.
  virtual std::optional<std::string> ReadFile(const std::string& path, const Node& at,
                                              Evaluator& ev);
  virtual std::optional<bool> FileExists(const std::string& path, const Node& at, Evaluator& ev);
};

struct EvalOptions {
  // Whether `resource["module.app.network.main"]` may be read: true only
  // for text the loader wrote (residuals, saved plans).
  bool qualified_refs = false;
};

class Evaluator {
 public:
  Evaluator(Scope& scope, std::vector<EvalError>& errors, EvalOptions options = {})
      : scope_(scope), errors_(errors), options_(options) {}

  Value Eval(const Node& n);

  // The expression with what is known folded into literals (see above).
  // Call after Eval() found the value unknown and reported nothing.
  NodePtr Residual(const Node& n);

  // Evaluates `n` without recording its errors: `failed` says whether it
  // had any (can(), try()). A result that is unknown but failed nothing is
  // unknown, not failed: it may still work once known.
  Value TryEval(const Node& n, bool& failed);

  // Reports a problem at `at` (nothing while errors are silenced).
  void Error(const Node& at, std::string code, std::string message, std::string detail = "");
  void ErrorAt(uint32_t begin, uint32_t end, std::string code, std::string message,
               std::string detail = "");
  bool failed() const { return failed_; }
  Scope& scope() { return scope_; }

  // A name bound by a `for` or a template for (shadowing the scope).
  struct Binding {
    Value value;
    // Residual keeps the name: the value is a stand-in for each element of
    // a collection not known yet.
    bool symbolic = false;
    // What Residual writes for the name when its value is not wholly known:
    // the element of the collection's residual it stands for.
    NodePtr residual;
  };

 private:
  // What a name chain denotes before it becomes a value.
  struct Operand;
  Operand Chain(const Node& n);
  Value Materialize(Operand&& o, const Node& at);
  Value GetAttr(const Value& obj, const std::string& name, const Node& at);
  Value IndexValue(const Value& coll, const Value& key, const Node& at, const Node& key_node);
  Value Binary(const Node& n);
  Value Unary(const Node& n);
  Value Conditional(const Node& n);
  Value Call(const Node& n);
  Value For(const Node& n);
  Value Splat(const Node& n);
  Value SplatOver(const Node& n, Value source);
  Value Template(const Node& n);
  Value TemplateFor(const Node& n, std::string& out, Value& marks, bool& unknown);
  void TemplateAppend(const Node& part, std::string& out, Value& marks, bool& unknown);
  NodePtr ResidualChain(const Node& n);
  NodePtr ResidualFor(const Node& n);

  Scope& scope_;
  std::vector<EvalError>& errors_;
  EvalOptions options_;
  std::vector<std::pair<std::string, Binding>> bindings_;  // innermost last
  Value splat_item_;
  int silenced_ = 0;  // > 0: errors are not recorded (Residual re-evaluates)
  bool failed_ = false;
  int depth_ = 0;

  friend class CallContext;
};

// The key of a `for_each` or an object: a string, or a number or bool
// converted to one; nullopt (reported by the caller) otherwise.
std::optional<std::string> KeyString(const Value& v);

}  // namespace cairn::expr
