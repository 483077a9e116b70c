// libFuzzer target: the expression language (engine/expr, and its
// expression form in engine/manifest/expr.h) on an arbitrary string, the
// text of one manifest value. Beyond "no crash, hang or leak" it checks
// what the headers promise:
//   - a parse error's range lies inside the text;
//   - printing a parsed tree and parsing the print gives the same tree;
//   - evaluating never drops a sensitive mark: with every variable marked,
//     a known result that read one is marked (deep);
//   - EscapeTemplateLiteral(s) reads back as the one literal s;
//   - ResolveReferences keeps a string without expressions as it is, and
//     resolves references nested in lists and mappings like at the top.
// The evaluator runs over a scope with variables of every type, known and
// unknown, and resources; the residual of an unknown result is printed and
// parsed back.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "base/value.h"
#include "engine/address.h"
#include "engine/expr/eval.h"
#include "engine/expr/parser.h"
#include "engine/manifest/expr.h"

namespace {

using cairn::expr::Value;

[[noreturn]] void Fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "expr_fuzz: %s\n  input: %s\n", what, input.substr(0, 400).c_str());
  std::abort();
}

// Attribute values of every shape; `id` of network.core is unknown.
std::optional<cairn::Value> Lookup(const cairn::ResourceAddress& a, const std::string& attr) {
  if (attr == "missing") return std::nullopt;
  if (attr == "id") return a.kind == "network" ? cairn::UnknownValue() : cairn::Value(a.ToString());
  if (attr == "n") return cairn::Value(42);
  if (attr == "list") return cairn::Value::array({"a", 1, nullptr});
  if (attr == "map") return cairn::Value{{"k", "v"}};
  if (attr == "bad") return cairn::Value("\xff\xfe");  // not UTF-8: dumps must not throw
  return cairn::Value(attr);
}

// Variables of every type, all sensitive; resources known and not.
class FuzzScope : public cairn::expr::Scope {
 public:
  bool read_sensitive = false;
  Value Named(const std::string& root, const std::string& attr, const cairn::expr::Node& at,
              cairn::expr::Evaluator& ev) override {
    Value v;
    if (root == "count" && attr == "index") return Value::Int(3);
    if (root == "each" && attr == "key") return Value::String("k");
    if (attr == "s")
      v = Value::String("text ${x}");
    else if (attr == "n")
      v = Value::Int(7);
    else if (attr == "f")
      v = Value::Real(2.5);
    else if (attr == "b")
      v = Value::Bool(true);
    else if (attr == "l")
      v = Value::MakeList({Value::Int(1), Value::String("a"), Value()});
    else if (attr == "m")
      v = Value::MakeMap({{"a", Value::Int(1)}, {"b", Value::String("x")}});
    else if (attr == "u")
      v = Value::Unknown();
    else if (attr == "z")
      v = Value();
    else {
      ev.Error(at, "unknown_reference", "no such variable");
      return Value::Unknown();
    }
    if (root != "var") return v;
    read_sensitive = true;
    return v.MarkedSensitive("var." + attr);
  }
  Value Resource(const std::string&, const std::string& kind, const std::string&, const Value* key,
                 const std::string* attr, const cairn::expr::Node&,
                 cairn::expr::Evaluator&) override {
    if (attr && *attr == "id") return Value::Unknown();
    if (!key && !attr) return Value::MakeList({Value::MakeMap({{"id", Value::Unknown()}})});
    return Value::String(kind);
  }
};

// Whether `s` calls `name`: the name, then blanks (which the parser
// skips), then "(".
bool Calls(const std::string& s, const std::string& name) {
  for (size_t at = s.find(name); at != std::string::npos; at = s.find(name, at + 1)) {
    size_t next = s.find_first_not_of(" \t\r\n", at + name.size());
    if (next != std::string::npos && s[next] == '(') return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto parsed = cairn::expr::ParseTemplate(s);
  if (const auto* err = std::get_if<cairn::expr::ParseError>(&parsed)) {
    if (err->begin > s.size() || err->end > s.size() + 1 || err->end < err->begin)
      Fail("error range out of the text", s);
  } else {
    const cairn::expr::NodePtr& tree = std::get<cairn::expr::NodePtr>(parsed);
    std::string printed = cairn::expr::PrintTemplate(*tree);
    auto again = cairn::expr::ParseTemplate(printed);
    const auto* tree2 = std::get_if<cairn::expr::NodePtr>(&again);
    if (!tree2) Fail("a printed tree does not parse", s);
    // A template whose literal parts merge differently may reparse as a
    // different shape; the text must then be stable.
    if (!cairn::expr::SameTree(*tree, **tree2) && cairn::expr::PrintTemplate(**tree2) != printed)
      Fail("printing and parsing again changes the tree", s);

    FuzzScope scope;
    std::vector<cairn::expr::EvalError> errors;
    cairn::expr::Evaluator ev(scope, errors);
    Value v = ev.Eval(*tree);
    for (const auto& e : errors) {
      if (e.begin > s.size() || e.end > s.size() || e.end < e.begin)
        Fail("an error's range lies outside the text", s);
    }
    if (errors.empty() && v.WhollyKnown() && scope.read_sensitive && !v.DeepSensitive()) {
      // Only a value that read no variable's content may lose the mark:
      // conversions to a value that does not depend on it (can(), a type
      // test) are the exceptions Terraform has too.
      bool may_drop = s.find("nonsensitive") != std::string::npos || Calls(s, "can") ||
                      Calls(s, "try") || s.find("length") != std::string::npos ||
                      s.find("?") != std::string::npos || s.find("&&") != std::string::npos ||
                      s.find("||") != std::string::npos || s.find("for") != std::string::npos ||
                      s.find("[*]") != std::string::npos || s.find(".*") != std::string::npos ||
                      s.find("if") != std::string::npos || s.find("each") != std::string::npos ||
                      s.find("fileexists") != std::string::npos;
      if (!may_drop && s.find("var.") != std::string::npos) Fail("a sensitive mark was dropped", s);
    }
    if (errors.empty() && !v.WhollyKnown()) {
      cairn::expr::NodePtr residual = ev.Residual(*tree);
      std::string text = cairn::expr::PrintTemplate(*residual);
      if (!std::holds_alternative<cairn::expr::NodePtr>(cairn::expr::ParseTemplate(text)))
        Fail("a residual does not parse", s);
    }
  }

  std::string escaped = cairn::EscapeTemplateLiteral(s);
  auto literal = cairn::expr::ParseTemplate(escaped);
  const auto* lt = std::get_if<cairn::expr::NodePtr>(&literal);
  if (!lt || (*lt)->kind != cairn::expr::NodeKind::kLiteral || (*lt)->value.as_string() != s)
    Fail("an escaped literal does not read back as itself", s);

  cairn::Value v = s;
  cairn::Value resolved = cairn::ResolveReferences(v, Lookup);
  if (!cairn::HasTemplateSyntax(s) && resolved != v) Fail("a plain string changed", s);
  cairn::Value nested = {{"a", cairn::Value::array({s, {{"b", s}}})}, {"c", 1}};
  cairn::Value nested_resolved = cairn::ResolveReferences(nested, Lookup);
  if (nested_resolved["a"][0] != resolved) Fail("a nested string resolves differently", s);
  (void)cairn::ResourceReferences(nested);
  return 0;
}
