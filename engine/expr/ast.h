// The syntax tree of an expression (HCL's native syntax, as Terraform
// writes it inside "${...}") and of a template (a string with "${...}"
// interpolations). parser.h builds it, with every node's byte range in the
// source text, so that a diagnostic can put its caret under the exact
// sub-expression; Print() writes it back as source, and parsing that again
// gives the same tree (tests/engine/expr/parser_test.cc checks it).
//
// One node type with a kind, rather than a class per kind: the evaluator,
// the printer and the reference walk each switch over the kinds in one
// place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/expr/value.h"

namespace cairn::expr {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

enum class NodeKind : uint8_t {
  kLiteral,      // `value`: a number, true, false, null, or a string without interpolation
  kTemplate,     // kids: the parts, each a string kLiteral or an expression (interpolated)
  kVariable,     // `name`: a root name (var, local, each, count, instance, a for's key...)
  kGetAttr,      // kids[0].`name`
  kIndex,        // kids[0][kids[1]]
  kSplat,        // kids[0][*] then kids[1], a traversal of kSplatItem (null: none)
  kSplatItem,    // the element a splat's traversal starts from
  kCall,         // `name`(kids...); `expand_last`: the last argument was written with "..."
  kUnary,        // `op` kids[0]: "-" or "!"
  kBinary,       // kids[0] `op` kids[1]
  kConditional,  // kids[0] ? kids[1] : kids[2]
  kTuple,        // [kids...]
  kObject,       // {kids[0] = kids[1], kids[2] = kids[3], ...}: keys are expressions
  kFor,          // see below
  kParens,       // (kids[0]): kept so that printing gives back the same tree
  kTemplateIf,   // %{ if kids[0] }kids[1]%{ else }kids[2]%{ endif }: kids[1..2] templates
  kTemplateFor,  // %{ for key_var, name in kids[0] }kids[1]%{ endfor }
};

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  // Byte range [begin, end) in the text the tree was parsed from.
  uint32_t begin = 0;
  uint32_t end = 0;
  Value value;       // kLiteral
  std::string name;  // kVariable, kGetAttr, kCall; kFor and kTemplateFor: the value variable
  std::string op;    // kUnary, kBinary
  // kFor, kTemplateFor: the key variable ("" when only one is written).
  std::string key_var;
  // kObject: a key written as a bare name (`{a = 1}`), which is the string
  // "a", not the variable a. kFor: {...} (an object) rather than [...].
  bool flag = false;
  // kCall: the last argument expands (`f(list...)`). kFor over an object:
  // values with one key are grouped into lists (`...`). kSplat: written `.*`
  // (attribute-only splat) rather than `[*]`.
  bool expand_last = false;
  // kFor: kids[0] the collection, kids[1] the key expression (object form;
  // null for a tuple), kids[2] the value expression, kids[3] the condition
  // (null when there is no `if`).
  std::vector<NodePtr> kids;
};

// Builders, for the parser and for code that writes expressions.
NodePtr MakeLiteral(Value v, uint32_t begin = 0, uint32_t end = 0);
NodePtr MakeVariable(std::string name, uint32_t begin = 0, uint32_t end = 0);
NodePtr MakeGetAttr(NodePtr obj, std::string name, uint32_t end = 0);
NodePtr MakeIndex(NodePtr obj, NodePtr key, uint32_t end = 0);

// The tree as expression source: a template as a quoted string. Ranges are
// not printed: parsing the result gives the same tree but for them.
std::string Print(const Node& n);

// The tree as the text of a manifest string (ParseTemplate's input): a
// template's literal parts with "${" escaped as "$${" and its expressions
// in "${...}"; any other expression as "${...}" around it.
std::string PrintTemplate(const Node& n);

// A chain of names from a root name, as written: `var.x`, `network.main[0].id`,
// `instance.node[each.key]`. What it refers to is the scope's business;
// this is what a reference walk (dependencies, redaction) reads.
struct Traversal {
  const Node* root = nullptr;   // the kVariable
  const Node* whole = nullptr;  // the outermost node of the chain
  struct Step {
    bool attr = true;
    std::string name;           // attr: the attribute
    const Node* key = nullptr;  // an index: its expression
  };
  std::vector<Step> steps;
};

// Every traversal in `n`, outermost first, each chain once (its longest
// form); names a `for` or a template `for` binds are not traversals, and
// neither are the element steps of a splat (`a[*].b` is the traversal `a`).
void Traversals(const Node& n, std::vector<Traversal>& out);

// True when the two trees are the same but for their byte ranges.
bool SameTree(const Node& a, const Node& b);

}  // namespace cairn::expr
