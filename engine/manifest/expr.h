// Expressions as the rest of the engine keeps them between load and apply.
//
// The language itself (parser, evaluator, functions) is engine/expr. The
// loader evaluates every `${...}` (engine/manifest/evaluate.h) and keeps a
// value in the StackConfig, in "expression form":
//  - what is known is the value itself, its strings escaped as template
//    text ("${" written "$${"), so that no value from a variable, a file or
//    the environment is ever read as an expression;
//  - what is known only after apply (it reads a resource's attribute) is
//    the expression's residual (expr::Evaluator::Residual), a string of
//    template text in which everything known is folded in and every
//    reference is written from the stack's root: `network.main.id` at the
//    stack, `resource["module.app.network.main"].id` inside a module.
// Plan and apply turn that form into values with ResolveReferences, which
// evaluates the residuals with the same evaluator, resource attributes read
// through an AttributeLookup.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/value.h"
#include "engine/address.h"
#include "engine/expr/ast.h"
#include "engine/expr/value.h"
#include "engine/manifest/config.h"

namespace cairn {

// A reference to a resource or to a module's output found in an expression.
struct Expression {
  enum class Type { kResource, kModuleOutput };
  Type type = Type::kResource;
  // kResource: the resource (a data source's kind is "data.KIND"), with its
  // index when one was written and known. kModuleOutput: target.module is
  // the module instance.
  ResourceAddress target;
  // Every instance: the index is not known until apply, or the resource is
  // used whole (`length(instance.web)`, `instance.web[*].id`).
  bool splat = false;
  // The attribute read; "" when the whole object is (or, kModuleOutput, the
  // output's name).
  std::string attr;
  // Byte offsets of the reference in the string it was found in.
  size_t begin = 0;
  size_t end = 0;

  // How messages name it: "instance.web[0].id", "instance.web[*].id",
  // "module.app.network_id".
  std::string ToString() const;
};

// True when `s` needs evaluating: it holds "${" (or "$${").
bool HasTemplateSyntax(std::string_view s);

// `s` with every "${" written as "$${", so it reads back as literal text.
std::string EscapeTemplateLiteral(std::string_view s);

// A known value in expression form: strings escaped, marks dropped.
Value ToExpressionForm(const expr::Value& v);

// A value in expression form read back: escapes undone, a residual
// Unknown. Strings that do not parse stay as they are.
expr::Value FromExpressionForm(const Value& v);

// A value in expression form as an expression: literals for what is
// known, the residuals parsed; lists and mappings as their constructors.
// Null when a residual does not parse.
expr::NodePtr NodeFromExpressionForm(const Value& v);

// Parses a string in expression form (a residual, text the loader wrote);
// null when it does not parse.
expr::NodePtr ParseExpressionForm(const std::string& text);

// Whether `v` (in expression form) holds an expression: a reference left
// for apply, or one that could not be evaluated.
bool HoldsExpressions(const Value& v);

// The references to resources and module outputs in a residual, in the
// order written.
std::vector<Expression> ReferencesIn(const expr::Node& n);

// `v` with every residual evaluated: resource attributes through `lookup`
// (nullopt from it: not known yet), and anything that depends on one not
// known becomes UnknownValue(). The identity on values without residuals.
Value ResolveReferences(const Value& v, const AttributeLookup& lookup);
// As above, `self` (a postcondition's) bound to `self` when not null.
Value ResolveReferences(const Value& v, const AttributeLookup& lookup, const Value* self);

// A residual that fails once its references are known (a function refusing
// a value known only now: `cidrsubnet(network.a.cidr, 8, 300)`): where in
// the value (`rules[0].port`, "" for the value itself), and the evaluator's
// error. The residual becomes UnknownValue(), as when it waits.
struct ResolveError {
  std::string path;
  std::string code;
  std::string message;
  std::string detail;
};
// As above, every failing residual reported in `errors` (when not null).
Value ResolveReferences(const Value& v, const AttributeLookup& lookup, const Value* self,
                        std::vector<ResolveError>* errors, const std::string& path = "");

// Every resource reference in the residuals of `v`, in document order.
std::vector<Expression> ResourceReferences(const Value& v);

}  // namespace cairn
