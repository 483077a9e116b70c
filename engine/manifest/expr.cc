#include "engine/manifest/expr.h"

#include <algorithm>

#include "engine/expr/eval.h"
#include "engine/expr/parser.h"

namespace cairn {
namespace {

// An index written as a literal: the address index it names, if any.
std::optional<AddressIndex> LiteralIndex(const expr::Node* key) {
  if (!key || key->kind != expr::NodeKind::kLiteral) return std::nullopt;
  const expr::Value& v = key->value;
  if (v.is_number() && v.as_number().is_int && v.as_number().i >= 0 &&
      v.as_number().i <= INT32_MAX) {
    return AddressIndex(static_cast<int>(v.as_number().i));
  }
  if (v.is_string()) return AddressIndex(v.as_string());
  return std::nullopt;
}

// A reference the steps of `t` from `first` name: KIND.NAME, an index, an
// attribute.
void ResourceSteps(const expr::Traversal& t, size_t first, Expression& e) {
  size_t i = first;
  if (i < t.steps.size() && !t.steps[i].attr) {
    if (auto idx = LiteralIndex(t.steps[i].key)) {
      e.target.index = *idx;
    } else {
      e.splat = true;
    }
    ++i;
  } else {
    e.splat = false;
  }
  if (i < t.steps.size() && t.steps[i].attr) e.attr = t.steps[i].name;
  // Used whole (no attribute): every instance when it was not indexed.
  if (e.attr.empty() && std::holds_alternative<std::monostate>(e.target.index)) e.splat = true;
}

// A resource's address from the loader's qualified text
// ("module.app[0].network.main", "data.network.shared").
std::optional<ResourceAddress> QualifiedAddress(const std::string& text) {
  if (text.rfind("data.", 0) == 0) {
    auto rest = ResourceAddress::Parse(text.substr(5));
    if (!rest || !rest->module.empty()) return std::nullopt;
    rest->kind = "data." + rest->kind;
    return rest;
  }
  return ResourceAddress::Parse(text);
}

void CollectReferences(const Value& v, std::vector<Expression>& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!HasTemplateSyntax(s)) return;
    if (expr::NodePtr n = ParseExpressionForm(s)) {
      for (Expression& e : ReferencesIn(*n)) {
        if (e.type == Expression::Type::kResource) out.push_back(std::move(e));
      }
    }
    return;
  }
  if (v.is_structured() && !IsUnknown(v)) {
    for (const auto& item : v) CollectReferences(item, out);
  }
}

// What residuals mean at plan and apply: resource attributes through the
// lookup, nothing else.
class LookupScope : public expr::Scope {
 public:
  LookupScope(const AttributeLookup& lookup, const Value* self) : lookup_(lookup), self_(self) {}

  std::optional<expr::Value> Root(const std::string& name) override {
    if (name == "self" && self_) return expr::Value::FromJson(*self_);
    return std::nullopt;
  }

  expr::Value Resource(const std::string& module, const std::string& kind, const std::string& name,
                       const expr::Value* key, const std::string* attr, const expr::Node& at,
                       expr::Evaluator& ev) override {
    ResourceAddress addr;
    addr.kind = kind;
    addr.name = name;
    if (!module.empty()) {
      auto path = ParseModulePath(module);
      if (!path) {
        ev.Error(at, "invalid_reference", "\"" + module + "\" is not a module path");
        return expr::Value::Unknown();
      }
      addr.module = std::move(*path);
    }
    if (key) {
      if (key->is_number() && key->as_number().is_int && key->as_number().i >= 0 &&
          key->as_number().i <= INT32_MAX) {
        addr.index = static_cast<int>(key->as_number().i);
      } else if (key->is_string()) {
        addr.index = key->as_string();
      } else {
        return expr::Value::Unknown();
      }
    }
    if (!lookup_) return expr::Value::Unknown();
    auto found = lookup_(addr, attr ? *attr : std::string());
    if (!found) return expr::Value::Unknown();
    return expr::Value::FromJson(*found);
  }

  expr::Value Module(const std::string&, const expr::Value*, const std::string*, const expr::Node&,
                     expr::Evaluator&) override {
    return expr::Value::Unknown();  // the loader put every module output in place
  }

 private:
  const AttributeLookup& lookup_;
  const Value* self_;
};

}  // namespace

std::string Expression::ToString() const {
  if (type == Type::kModuleOutput) return ModulePathPrefix(target.module) + attr;
  std::string s = splat && std::holds_alternative<std::monostate>(target.index)
                      ? target.BaseString() + "[*]"
                      : target.ToString();
  return attr.empty() ? s : s + "." + attr;
}

bool HasTemplateSyntax(std::string_view s) { return expr::HasTemplateSyntax(s); }

std::string EscapeTemplateLiteral(std::string_view s) { return expr::EscapeTemplateText(s); }

bool HoldsExpressions(const Value& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!HasTemplateSyntax(s)) return false;
    expr::NodePtr n = ParseExpressionForm(s);
    return !n || n->kind != expr::NodeKind::kLiteral;
  }
  if (v.is_structured()) return std::any_of(v.begin(), v.end(), HoldsExpressions);
  return false;
}

Value ToExpressionForm(const expr::Value& v) {
  switch (v.type()) {
    case expr::Type::kString:
      return EscapeTemplateLiteral(v.as_string());
    case expr::Type::kList:
    case expr::Type::kSet: {
      Value out = Value::array();
      for (const expr::Value& item : v.items()) out.push_back(ToExpressionForm(item));
      return out;
    }
    case expr::Type::kMap: {
      Value out = Value::object();
      for (const auto& [k, item] : v.entries()) out[k] = ToExpressionForm(item);
      return out;
    }
    default:
      return v.ToJson();
  }
}

expr::Value FromExpressionForm(const Value& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!HasTemplateSyntax(s)) return expr::Value::String(s);
    expr::NodePtr n = ParseExpressionForm(s);
    if (!n) return expr::Value::String(s);
    if (n->kind == expr::NodeKind::kLiteral) return n->value;
    // A residual, or a sensitive literal the loader wrote as sensitive(...).
    if (n->kind == expr::NodeKind::kCall && n->name == "sensitive" && n->kids.size() == 1 &&
        n->kids[0]->kind == expr::NodeKind::kLiteral) {
      return n->kids[0]->value.MarkedSensitive("sensitive()");
    }
    return expr::Value::Unknown();
  }
  if (v.is_array()) {
    expr::List items;
    items.reserve(v.size());
    for (const auto& item : v) items.push_back(FromExpressionForm(item));
    return expr::Value::MakeList(std::move(items));
  }
  if (v.is_object()) {
    if (IsUnknown(v)) return expr::Value::Unknown();
    expr::Map m;
    for (auto it = v.begin(); it != v.end(); ++it) m.emplace(it.key(), FromExpressionForm(*it));
    return expr::Value::MakeMap(std::move(m));
  }
  return expr::Value::FromJson(v);
}

expr::NodePtr NodeFromExpressionForm(const Value& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!HasTemplateSyntax(s)) return expr::MakeLiteral(expr::Value::String(s));
    return ParseExpressionForm(s);
  }
  if (v.is_array()) {
    auto n = std::make_shared<expr::Node>();
    n->kind = expr::NodeKind::kTuple;
    for (const auto& item : v) {
      expr::NodePtr k = NodeFromExpressionForm(item);
      if (!k) return nullptr;
      n->kids.push_back(std::move(k));
    }
    return n;
  }
  if (v.is_object() && !IsUnknown(v)) {
    auto n = std::make_shared<expr::Node>();
    n->kind = expr::NodeKind::kObject;
    for (auto it = v.begin(); it != v.end(); ++it) {
      expr::NodePtr k = NodeFromExpressionForm(*it);
      if (!k) return nullptr;
      n->kids.push_back(expr::MakeLiteral(expr::Value::String(it.key())));
      n->kids.push_back(std::move(k));
    }
    return n;
  }
  return expr::MakeLiteral(expr::Value::FromJson(v));
}

expr::NodePtr ParseExpressionForm(const std::string& text) {
  auto parsed = expr::ParseTemplate(text);
  if (auto* n = std::get_if<expr::NodePtr>(&parsed)) return *n;
  return nullptr;
}

std::vector<Expression> ReferencesIn(const expr::Node& n) {
  std::vector<expr::Traversal> traversals;
  expr::Traversals(n, traversals);
  std::vector<Expression> out;
  for (const expr::Traversal& t : traversals) {
    const std::string& root = t.root->name;
    Expression e;
    e.begin = t.whole->begin;
    e.end = t.whole->end;
    const auto& st = t.steps;
    if (root == "resource") {
      if (st.empty() || st[0].attr || !st[0].key || st[0].key->kind != expr::NodeKind::kLiteral ||
          !st[0].key->value.is_string())
        continue;
      auto addr = QualifiedAddress(st[0].key->value.as_string());
      if (!addr) continue;
      e.target = std::move(*addr);
      ResourceSteps(t, 1, e);
    } else if (root == "module") {
      e.type = Expression::Type::kModuleOutput;
      size_t i = 0;
      if (!st.empty() && !st[0].attr && st[0].key && st[0].key->kind == expr::NodeKind::kLiteral &&
          st[0].key->value.is_string()) {
        auto path = ParseModulePath(st[0].key->value.as_string());
        if (!path) continue;
        e.target.module = std::move(*path);
        i = 1;
      } else if (!st.empty() && st[0].attr) {
        ModuleStep step{st[0].name, {}};
        i = 1;
        if (i < st.size() && !st[i].attr) {
          auto idx = LiteralIndex(st[i].key);
          if (!idx) continue;
          step.index = *idx;
          ++i;
        }
        e.target.module.push_back(std::move(step));
      } else {
        continue;
      }
      if (i >= st.size() || !st[i].attr) continue;
      e.attr = st[i].name;
    } else if (root == "data") {
      if (st.size() < 2 || !st[0].attr || !st[1].attr) continue;
      e.target.kind = "data." + st[0].name;
      e.target.name = st[1].name;
      ResourceSteps(t, 2, e);
    } else if (root == "var" || root == "local" || root == "each" || root == "count" ||
               root == "path" || root == "self" || root == "terraform") {
      continue;
    } else {
      if (st.empty() || !st[0].attr) continue;
      e.target.kind = root;
      e.target.name = st[0].name;
      ResourceSteps(t, 1, e);
    }
    out.push_back(std::move(e));
  }
  return out;
}

Value ResolveReferences(const Value& v, const AttributeLookup& lookup) {
  return ResolveReferences(v, lookup, nullptr);
}

Value ResolveReferences(const Value& v, const AttributeLookup& lookup, const Value* self) {
  return ResolveReferences(v, lookup, self, nullptr);
}

Value ResolveReferences(const Value& v, const AttributeLookup& lookup, const Value* self,
                        std::vector<ResolveError>* report, const std::string& path) {
  if (v.is_array()) {
    Value out = Value::array();
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(ResolveReferences(v[i], lookup, self, report,
                                      report ? path + "[" + std::to_string(i) + "]" : path));
    }
    return out;
  }
  if (v.is_object()) {
    if (IsUnknown(v)) return v;
    Value out = Value::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      out[it.key()] = ResolveReferences(
          *it, lookup, self, report, report ? (path.empty() ? "" : path + ".") + it.key() : path);
    }
    return out;
  }
  if (!v.is_string()) return v;
  const auto& s = v.get_ref<const std::string&>();
  if (!HasTemplateSyntax(s)) return v;
  expr::NodePtr n = ParseExpressionForm(s);
  if (!n) return v;
  LookupScope scope(lookup, self);
  std::vector<expr::EvalError> errors;
  expr::EvalOptions options;
  options.qualified_refs = true;
  expr::Evaluator ev(scope, errors, options);
  expr::Value r = ev.Eval(*n);
  // An error here (a function refusing a value known only now) leaves the
  // value unknown: apply refuses to send what it cannot compute.
  if (report) {
    for (expr::EvalError& e : errors) {
      report->push_back({path, std::move(e.code), std::move(e.message), std::move(e.detail)});
    }
  }
  if (!errors.empty() || r.ContainsUnknown()) return UnknownValue();
  return r.ToJson();
}

std::vector<Expression> ResourceReferences(const Value& v) {
  std::vector<Expression> out;
  CollectReferences(v, out);
  return out;
}

}  // namespace cairn
