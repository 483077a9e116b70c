// Evaluating expression text in tests: a scope with variables, locals,
// count/each and resources given as values, and the result or the first
// error as text.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/expr/eval.h"
#include "engine/expr/parser.h"

namespace cairn::expr::testing {

class TableScope : public Scope {
 public:
  std::map<std::string, Value> vars, locals, each;
  std::optional<int64_t> count_index;
  // "kind.name" -> the resource's value (its instance's object, or a list
  // or map of them); reads recorded in `reads`.
  std::map<std::string, Value> resources;
  std::map<std::string, Value> files;
  std::vector<std::string> reads;

  Value Named(const std::string& root, const std::string& attr, const Node& at,
              Evaluator& ev) override {
    std::map<std::string, Value>* table = root == "var"     ? &vars
                                          : root == "local" ? &locals
                                          : root == "each"  ? &each
                                                            : nullptr;
    if (root == "count" && attr == "index" && count_index) return Value::Int(*count_index);
    if (table) {
      auto it = table->find(attr);
      if (it != table->end()) return it->second;
    }
    ev.Error(at, "unknown_reference", "no " + root + "." + attr);
    return Value::Unknown();
  }

  Value Resource(const std::string& module, const std::string& kind, const std::string& name,
                 const Value* key, const std::string* attr, const Node& at,
                 Evaluator& ev) override {
    std::string addr = (module.empty() ? "" : module + ".") + kind + "." + name;
    auto it = resources.find(addr);
    if (it == resources.end()) {
      ev.Error(at, "unknown_reference", "no resource " + addr);
      return Value::Unknown();
    }
    Value v = it->second;
    std::string read = addr;
    if (key) {
      read += "[" + ToSource(*key) + "]";
      if (v.is_list() && key->is_number()) {
        v = v.items().at(static_cast<size_t>(key->as_number().i));
      } else if (v.is_map() && key->is_string()) {
        v = v.entries().at(key->as_string());
      }
    }
    if (attr) {
      read += "." + *attr;
      if (v.is_map()) {
        auto a = v.entries().find(*attr);
        v = a == v.entries().end() ? Value::Unknown() : a->second;
      }
    }
    reads.push_back(read);
    return v;
  }

  NodePtr ResidualResource(const std::string& module, const std::string& kind,
                           const std::string& name, const Value* key, const std::string* attr,
                           const Node& at) override {
    (void)at;
    NodePtr n = MakeVariable(kind);
    if (!module.empty()) {
      n = MakeIndex(MakeVariable("resource"),
                    MakeLiteral(Value::String(module + "." + kind + "." + name)));
    } else {
      n = MakeGetAttr(n, name);
    }
    if (key) n = MakeIndex(n, MakeLiteral(*key));
    if (attr) n = MakeGetAttr(n, *attr);
    return n;
  }

  std::optional<std::string> ReadFile(const std::string& path, const Node& at,
                                      Evaluator& ev) override {
    auto it = files.find(path);
    if (it == files.end()) {
      ev.Error(at, "file_not_found", "no file " + path);
      return std::nullopt;
    }
    return it->second.as_string();
  }
  std::optional<bool> FileExists(const std::string& path, const Node&, Evaluator&) override {
    return files.count(path) > 0;
  }
};

struct Outcome {
  Value value;
  std::vector<EvalError> errors;
  std::string parse_error;
  bool ok() const { return parse_error.empty() && errors.empty(); }
  // "code: message" of the first problem, or "".
  std::string error() const {
    if (!parse_error.empty()) return "parse: " + parse_error;
    if (errors.empty()) return "";
    return errors[0].code + ": " + errors[0].message;
  }
};

// Evaluates `text` as one expression.
inline Outcome Run(const std::string& text, Scope& scope) {
  Outcome o;
  auto parsed = ParseExpression(text);
  if (auto* e = std::get_if<ParseError>(&parsed)) {
    o.parse_error = e->message;
    return o;
  }
  Evaluator ev(scope, o.errors);
  o.value = ev.Eval(*std::get<NodePtr>(parsed));
  return o;
}

inline Outcome Run(const std::string& text) {
  TableScope scope;
  return Run(text, scope);
}

// The value of `text` as HCL source ("[1, 2]"), or "error: ..." .
inline std::string Show(const std::string& text, Scope& scope) {
  Outcome o = Run(text, scope);
  if (!o.ok()) return "error: " + o.error();
  return ToSource(o.value);
}
inline std::string Show(const std::string& text) {
  TableScope scope;
  return Show(text, scope);
}

}  // namespace cairn::expr::testing
