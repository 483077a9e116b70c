#include "engine/expr/eval.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/schema/suggest.h"
#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

// Deep marks of `from` added to `v`.
Value CarryMarks(Value v, const Value& from) {
  std::vector<std::string> origins;
  if (!from.DeepSensitive(&origins)) return v;
  for (const std::string& o : origins) v = v.MarkedSensitive(o);
  return v;
}

const char* Article(Type t) { return (t == Type::kUnknown) ? "an" : "a"; }

std::string Noun(const Value& v) { return std::string(Article(v.type())) + " " + v.type_name(); }

// The roots Scope::Named answers: `root.attr`.
bool IsNamedRoot(const std::string& r) {
  return r == "var" || r == "local" || r == "count" || r == "each" || r == "path" || r == "self" ||
         r == "terraform" || r == "env";
}

struct Silence {
  int& n;
  explicit Silence(int& counter) : n(counter) { ++n; }
  ~Silence() { --n; }
};

}  // namespace

std::optional<std::string> KeyString(const Value& v) { return ToStringValue(v); }

// ---- Scope defaults -------------------------------------------------------

Value Scope::Named(const std::string& root, const std::string& attr, const Node& at,
                   Evaluator& ev) {
  ev.Error(at, "unknown_reference", root + "." + attr + " is not available here");
  return Value::Unknown();
}

Value Scope::Resource(const std::string& module, const std::string& kind, const std::string& name,
                      const Value* key, const std::string* attr, const Node& at, Evaluator& ev) {
  (void)module, (void)key, (void)attr;
  ev.Error(at, "reference_not_allowed", "cannot refer to " + kind + "." + name + " here");
  return Value::Unknown();
}

Value Scope::Module(const std::string& name, const Value* key, const std::string* output,
                    const Node& at, Evaluator& ev) {
  (void)key, (void)output;
  ev.Error(at, "reference_not_allowed", "cannot refer to module." + name + " here");
  return Value::Unknown();
}

std::optional<std::string> Scope::ReadFile(const std::string& path, const Node& at, Evaluator& ev) {
  ev.Error(
      at, "invalid_function_argument",
      "files cannot be read here (\"" + path + "\"): file functions work when a stack is loaded");
  return std::nullopt;
}

std::optional<bool> Scope::FileExists(const std::string& path, const Node& at, Evaluator& ev) {
  return ReadFile(path, at, ev) ? std::optional<bool>(true) : std::nullopt;
}

// ---- errors --------------------------------------------------------------

void Evaluator::Error(const Node& at, std::string code, std::string message, std::string detail) {
  ErrorAt(at.begin, at.end, std::move(code), std::move(message), std::move(detail));
}

void Evaluator::ErrorAt(uint32_t begin, uint32_t end, std::string code, std::string message,
                        std::string detail) {
  failed_ = true;
  if (silenced_ > 0) return;
  errors_.push_back({std::move(code), std::move(message), std::move(detail), begin, end});
}

Value Evaluator::TryEval(const Node& n, bool& failed) {
  Silence quiet(silenced_);
  bool before = failed_;
  failed_ = false;
  Value v = Eval(n);
  failed = failed_;
  failed_ = before;
  return v;
}

// ---- references ----------------------------------------------------------

struct Evaluator::Operand {
  enum Kind {
    kValue,
    kRoot,       // var, local, count, each, path, self, terraform: wants `.attr`
    kKind,       // a resource kind: wants `.NAME`
    kData,       // data: wants `.KIND`
    kModules,    // module: wants `.NAME`
    kQualified,  // resource: wants ["module...kind.name"]
    kResource,   // KIND.NAME
    kInstance,   // KIND.NAME[KEY]
    kModule,     // module.NAME
    kModuleInstance,
  } kind = kValue;
  Value value;         // kValue; kInstance, kModuleInstance: the key
  std::string module;  // kResource, kInstance: the module path ("" for the stack)
  std::string a, b;    // kRoot, kKind, kData, kModules: a = the root; kResource: a kind, b name;
                       // kModule, kModuleInstance: a = name
};

Evaluator::Operand Evaluator::Chain(const Node& n) {
  Operand o;
  switch (n.kind) {
    case NodeKind::kVariable: {
      for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
        if (it->first == n.name) {
          o.value = it->second.value;
          return o;
        }
      }
      if (auto v = scope_.Root(n.name)) {
        o.value = std::move(*v);
        return o;
      }
      o.a = n.name;
      if (IsNamedRoot(n.name)) {
        o.kind = Operand::kRoot;
      } else if (n.name == "data") {
        o.kind = Operand::kData;
      } else if (n.name == "module") {
        o.kind = Operand::kModules;
      } else if (n.name == "resource" && options_.qualified_refs) {
        o.kind = Operand::kQualified;
      } else {
        o.kind = Operand::kKind;
      }
      return o;
    }
    case NodeKind::kGetAttr: {
      Operand obj = Chain(*n.kids[0]);
      switch (obj.kind) {
        case Operand::kValue:
          o.value = GetAttr(obj.value, n.name, n);
          return o;
        case Operand::kRoot:
          o.value = scope_.Named(obj.a, n.name, n, *this);
          return o;
        case Operand::kData:
          o.kind = Operand::kKind;
          o.a = "data." + n.name;
          return o;
        case Operand::kKind:
          o.kind = Operand::kResource;
          o.a = obj.a;
          o.b = n.name;
          return o;
        case Operand::kModules:
          o.kind = Operand::kModule;
          o.a = n.name;
          return o;
        case Operand::kQualified:
          Error(n, "invalid_reference", "resource[...] takes an address in brackets");
          o.value = Value::Unknown();
          return o;
        case Operand::kResource:
          o.value = scope_.Resource(obj.module, obj.a, obj.b, nullptr, &n.name, n, *this);
          return o;
        case Operand::kInstance:
          // An instance picked by a sensitive key is sensitive: which one
          // it is tells the key.
          o.value = scope_.Resource(obj.module, obj.a, obj.b, &obj.value, &n.name, n, *this)
                        .WithMarksOf(obj.value);
          return o;
        case Operand::kModule:
          o.value = scope_.Module(obj.a, nullptr, &n.name, n, *this);
          return o;
        case Operand::kModuleInstance:
          o.value = scope_.Module(obj.a, &obj.value, &n.name, n, *this).WithMarksOf(obj.value);
          return o;
      }
      return o;
    }
    case NodeKind::kIndex: {
      Operand obj = Chain(*n.kids[0]);
      Value key = Eval(*n.kids[1]);
      if (obj.kind == Operand::kQualified) {
        if (!key.is_string()) {
          Error(*n.kids[1], "invalid_reference", "resource[...] takes an address");
          o.value = Value::Unknown();
          return o;
        }
        // "module.a[0].module.b.KIND.NAME": the module path is everything
        // before the last two names.
        const std::string& addr = key.as_string();
        size_t name_dot = addr.rfind('.');
        size_t kind_dot =
            name_dot == std::string::npos ? std::string::npos : addr.rfind('.', name_dot - 1);
        if (name_dot == std::string::npos) {
          Error(*n.kids[1], "invalid_reference", "\"" + addr + "\" is not a resource address");
          o.value = Value::Unknown();
          return o;
        }
        size_t kind_begin = kind_dot == std::string::npos ? 0 : kind_dot + 1;
        o.kind = Operand::kResource;
        o.module = kind_dot == std::string::npos ? "" : addr.substr(0, kind_dot);
        o.a = addr.substr(kind_begin, name_dot - kind_begin);
        o.b = addr.substr(name_dot + 1);
        if (o.a == "data" ||
            (o.module.size() >= 5 && o.module.compare(o.module.size() - 5, 5, ".data") == 0)) {
          // data.KIND.NAME at the stack: the kind is "data.KIND".
          size_t d = o.module.rfind('.');
          o.a = "data." + o.a;
          o.module = d == std::string::npos ? "" : o.module.substr(0, d);
        }
        return o;
      }
      if (obj.kind == Operand::kModules && options_.qualified_refs && key.is_string() &&
          key.as_string().rfind("module.", 0) == 0) {
        // The loader's form of a module instance anywhere in the tree:
        // module["module.app[0].module.db"].
        o.kind = Operand::kModule;
        o.a = key.as_string();
        return o;
      }
      if (obj.kind == Operand::kResource || obj.kind == Operand::kModule) {
        if (key.is_unknown()) {
          // Which instance is not known yet: the whole resource is read.
          Value whole = Materialize(std::move(obj), *n.kids[0]);
          o.value = whole.is_unknown() ? Value::Unknown() : IndexValue(whole, key, n, *n.kids[1]);
          return o;
        }
        if (key.is_null()) {
          Error(*n.kids[1], "invalid_index", "an index must not be null");
          o.value = Value::Unknown();
          return o;
        }
        o.kind = obj.kind == Operand::kResource ? Operand::kInstance : Operand::kModuleInstance;
        o.module = std::move(obj.module);
        o.a = std::move(obj.a);
        o.b = std::move(obj.b);
        o.value = key;
        return o;
      }
      Value coll = Materialize(std::move(obj), *n.kids[0]);
      o.value = IndexValue(coll, key, n, *n.kids[1]);
      return o;
    }
    default:
      o.value = Eval(n);
      return o;
  }
}

Value Evaluator::Materialize(Operand&& o, const Node& at) {
  switch (o.kind) {
    case Operand::kValue:
      return std::move(o.value);
    case Operand::kRoot:
      if (o.a == "self") return scope_.Named("self", "", at, *this);
      Error(at, "invalid_reference",
            "\"" + o.a + "\" cannot be used alone: write " + o.a + "." +
                (o.a == "count"  ? "index"
                 : o.a == "each" ? "key or each.value"
                                 : "NAME"));
      return Value::Unknown();
    case Operand::kKind:
      if (o.a.rfind("data.", 0) == 0) {
        Error(at, "invalid_reference", "expected data.KIND.NAME, e.g. data.network.shared.id");
      } else if (auto near = SuggestName(o.a, scope_.ValueRootNames())) {
        Error(at, "invalid_reference",
              "\"" + o.a + "\" alone is not a value: did you mean " + *near + "?");
      } else {
        Error(at, "invalid_reference",
              "\"" + o.a + "\" alone is not a value: write " + o.a +
                  ".NAME (a resource), or var.NAME, local.NAME...");
      }
      return Value::Unknown();
    case Operand::kData:
      Error(at, "invalid_reference", "expected data.KIND.NAME, e.g. data.network.shared.id");
      return Value::Unknown();
    case Operand::kModules:
      Error(at, "invalid_reference", "expected module.NAME.OUTPUT, e.g. module.app.network_id");
      return Value::Unknown();
    case Operand::kQualified:
      Error(at, "invalid_reference", "resource[...] takes an address in brackets");
      return Value::Unknown();
    case Operand::kResource:
      return scope_.Resource(o.module, o.a, o.b, nullptr, nullptr, at, *this);
    case Operand::kInstance:
      return scope_.Resource(o.module, o.a, o.b, &o.value, nullptr, at, *this).WithMarksOf(o.value);
    case Operand::kModule:
      return scope_.Module(o.a, nullptr, nullptr, at, *this);
    case Operand::kModuleInstance:
      return scope_.Module(o.a, &o.value, nullptr, at, *this).WithMarksOf(o.value);
  }
  return Value::Unknown();
}

Value Evaluator::GetAttr(const Value& obj, const std::string& name, const Node& at) {
  if (obj.is_unknown()) return obj;
  if (obj.is_map()) {
    auto it = obj.entries().find(name);
    if (it == obj.entries().end()) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : obj.entries()) keys.push_back(k);
      std::string hint = DidYouMean(name, keys);
      Error(at, "missing_key", "this object has no attribute \"" + name + "\"", hint);
      return Value::Unknown();
    }
    return it->second.WithMarksOf(obj);
  }
  if (obj.is_null()) {
    Error(at, "null_value", "cannot read attribute \"" + name + "\" of null");
    return Value::Unknown();
  }
  if (obj.is_sequence()) {
    Error(at, "type_mismatch", "cannot read attribute \"" + name + "\" of " + Noun(obj),
          "to read it from every element, write [*]." + name);
    return Value::Unknown();
  }
  Error(at, "type_mismatch", "cannot read attribute \"" + name + "\" of " + Noun(obj));
  return Value::Unknown();
}

Value Evaluator::IndexValue(const Value& coll, const Value& key, const Node& at,
                            const Node& key_node) {
  if (coll.is_unknown()) return Value::Unknown().WithMarksOf(coll);
  if (coll.is_null()) {
    Error(at, "null_value", "cannot index null");
    return Value::Unknown();
  }
  if (key.is_null()) {
    Error(key_node, "invalid_index", "an index must not be null");
    return Value::Unknown();
  }
  if (key.is_unknown()) {
    if (!coll.is_collection()) {
      Error(at, "type_mismatch", "cannot index " + Noun(coll));
    }
    return Value::Unknown().WithMarksOf(coll);
  }
  if (coll.is_list()) {
    std::optional<int64_t> i;
    if (key.is_number() && key.as_number().is_int) {
      i = key.as_number().i;
    } else if (key.is_string()) {
      int64_t parsed = 0;
      const std::string& s = key.as_string();
      auto r = std::from_chars(s.data(), s.data() + s.size(), parsed);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) i = parsed;
    }
    if (!i) {
      Error(key_node, "invalid_index",
            "a list is indexed by a whole number, not " +
                (key.is_string() ? "\"" + key.as_string() + "\"" : Noun(key)));
      return Value::Unknown();
    }
    if (*i < 0 || static_cast<uint64_t>(*i) >= coll.size()) {
      Error(key_node, "index_out_of_range",
            "index " + std::to_string(*i) + " is out of range for a list of " +
                std::to_string(coll.size()) + " element" + (coll.size() == 1 ? "" : "s"));
      return Value::Unknown();
    }
    return coll.items()[static_cast<size_t>(*i)].WithMarksOf(coll).WithMarksOf(key);
  }
  if (coll.is_map()) {
    auto k = KeyString(key);
    if (!k) {
      Error(key_node, "invalid_index", "a map is indexed by a string, not " + Noun(key));
      return Value::Unknown();
    }
    auto it = coll.entries().find(*k);
    if (it == coll.entries().end()) {
      std::vector<std::string> keys;
      for (const auto& [name, v] : coll.entries()) keys.push_back(name);
      Error(key_node, "missing_key", "no element has the key \"" + *k + "\"", DidYouMean(*k, keys));
      return Value::Unknown();
    }
    return it->second.WithMarksOf(coll).WithMarksOf(key);
  }
  if (coll.is_set()) {
    Error(at, "type_mismatch", "a set has no order and cannot be indexed",
          "convert it with tolist() first, or use for or one()");
    return Value::Unknown();
  }
  Error(at, "type_mismatch", "cannot index " + Noun(coll));
  return Value::Unknown();
}

// ---- evaluation ------------------------------------------------------------

Value Evaluator::Eval(const Node& n) {
  if (++depth_ > 2 * 64 + 16) {
    --depth_;
    Error(n, "invalid_expression", "the expression nests too deeply");
    return Value::Unknown();
  }
  struct Leave {
    int& d;
    ~Leave() { --d; }
  } leave{depth_};
  switch (n.kind) {
    case NodeKind::kLiteral:
      return n.value;
    case NodeKind::kTemplate:
    case NodeKind::kTemplateIf:
    case NodeKind::kTemplateFor:
      return Template(n);
    case NodeKind::kVariable:
    case NodeKind::kGetAttr:
    case NodeKind::kIndex:
      return Materialize(Chain(n), n);
    case NodeKind::kSplat:
      return Splat(n);
    case NodeKind::kSplatItem:
      return splat_item_;
    case NodeKind::kCall:
      return Call(n);
    case NodeKind::kUnary:
      return Unary(n);
    case NodeKind::kBinary:
      return Binary(n);
    case NodeKind::kConditional:
      return Conditional(n);
    case NodeKind::kTuple: {
      List items;
      items.reserve(n.kids.size());
      for (const NodePtr& k : n.kids) items.push_back(Eval(*k));
      return Value::MakeList(std::move(items));
    }
    case NodeKind::kObject: {
      Map m;
      bool unknown_key = false;
      Value key_marks;
      for (size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        Value key = Eval(*n.kids[i]);
        Value value = Eval(*n.kids[i + 1]);
        if (key.is_unknown()) {
          unknown_key = true;
          continue;
        }
        auto k = KeyString(key);
        if (!k) {
          Error(*n.kids[i], "type_mismatch", "an object's key must be a string, not " + Noun(key));
          continue;
        }
        if (m.count(*k)) {
          Error(*n.kids[i], "duplicate_key", "the key \"" + *k + "\" is written twice");
          continue;
        }
        key_marks = key_marks.WithMarksOf(key);
        m.emplace(*k, std::move(value));
      }
      if (unknown_key) return Value::Unknown();
      return Value::MakeMap(std::move(m)).WithMarksOf(key_marks);
    }
    case NodeKind::kFor:
      return For(n);
    case NodeKind::kParens:
      return Eval(*n.kids[0]);
  }
  return Value::Unknown();
}

namespace {

// Terraform's conversion of an operand to a number.
std::optional<Number> ToNumber(const Value& v) {
  if (v.is_number()) return v.as_number();
  if (v.is_string()) {
    const std::string& s = v.as_string();
    int64_t i = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), i);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return Number::Int(i);
    double d = 0;
    auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
    if (rd.ec == std::errc() && rd.ptr == s.data() + s.size() && !s.empty() && std::isfinite(d))
      return Number::Real(d);
  }
  return std::nullopt;
}

std::optional<bool> ToBool(const Value& v) {
  if (v.is_bool()) return v.as_bool();
  if (v.is_string() && (v.as_string() == "true" || v.as_string() == "false"))
    return v.as_string() == "true";
  return std::nullopt;
}

}  // namespace

Value Evaluator::Unary(const Node& n) {
  Value v = Eval(*n.kids[0]);
  if (v.is_unknown()) return Value::Unknown().WithMarksOf(v);
  if (n.op == "!") {
    auto b = ToBool(v);
    if (!b) {
      Error(*n.kids[0], "type_mismatch", "\"!\" needs a bool, not " + Noun(v));
      return Value::Unknown();
    }
    return Value::Bool(!*b).WithMarksOf(v);
  }
  auto num = ToNumber(v);
  if (!num) {
    Error(*n.kids[0], "type_mismatch", "\"-\" needs a number, not " + Noun(v));
    return Value::Unknown();
  }
  if (num->is_int) {
    if (num->i == INT64_MIN) {
      Error(n, "number_overflow", "the result does not fit a 64-bit integer");
      return Value::Unknown();
    }
    return Value::Int(-num->i).WithMarksOf(v);
  }
  return Value::Real(-num->d).WithMarksOf(v);
}

Value Evaluator::Binary(const Node& n) {
  const std::string& op = n.op;
  Value a = Eval(*n.kids[0]);
  Value b = Eval(*n.kids[1]);
  auto marked = [&](Value r) { return CarryMarks(CarryMarks(std::move(r), a), b); };

  if (op == "&&" || op == "||") {
    std::optional<bool> x, y;
    if (!a.is_unknown()) {
      x = ToBool(a);
      if (!x) Error(*n.kids[0], "type_mismatch", "\"" + op + "\" needs bools, not " + Noun(a));
    }
    if (!b.is_unknown()) {
      y = ToBool(b);
      if (!y) Error(*n.kids[1], "type_mismatch", "\"" + op + "\" needs bools, not " + Noun(b));
    }
    if ((!a.is_unknown() && !x) || (!b.is_unknown() && !y)) return Value::Unknown();
    bool decisive = op == "||";  // the operand value that decides alone
    if ((x && *x == decisive) || (y && *y == decisive)) return marked(Value::Bool(decisive));
    if (!x || !y) return marked(Value::Unknown());
    return marked(Value::Bool(op == "&&" ? (*x && *y) : (*x || *y)));
  }
  if (op == "==" || op == "!=") {
    if (a.ContainsUnknown() || b.ContainsUnknown()) return marked(Value::Unknown());
    bool eq = Equal(a, b);
    return marked(Value::Bool(op == "==" ? eq : !eq));
  }
  // Arithmetic and comparison: numbers.
  std::optional<Number> x, y;
  if (!a.is_unknown()) {
    x = ToNumber(a);
    if (!x) {
      Error(*n.kids[0], "type_mismatch",
            "\"" + op + "\" needs numbers, not " +
                (a.is_string() ? "the string \"" + a.as_string() + "\"" : Noun(a)));
    }
  }
  if (!b.is_unknown()) {
    y = ToNumber(b);
    if (!y) {
      Error(*n.kids[1], "type_mismatch",
            "\"" + op + "\" needs numbers, not " +
                (b.is_string() ? "the string \"" + b.as_string() + "\"" : Noun(b)));
    }
  }
  if ((!a.is_unknown() && !x) || (!b.is_unknown() && !y)) return Value::Unknown();
  if (!x || !y) return marked(Value::Unknown());
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    int c = Compare(Value::Num(*x), Value::Num(*y));
    bool r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    return marked(Value::Bool(r));
  }
  auto overflow = [&] {
    Error(n, "number_overflow", "the result of \"" + op + "\" does not fit a 64-bit integer");
    return Value::Unknown();
  };
  if ((op == "/" || op == "%") && ((y->is_int && y->i == 0) || (!y->is_int && y->d == 0))) {
    Error(*n.kids[1], "division_by_zero", op == "/" ? "division by zero" : "modulo by zero");
    return Value::Unknown();
  }
  if (x->is_int && y->is_int) {
    int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(x->i, y->i, &r)) return overflow();
    } else if (op == "-") {
      if (__builtin_sub_overflow(x->i, y->i, &r)) return overflow();
    } else if (op == "*") {
      if (__builtin_mul_overflow(x->i, y->i, &r)) return overflow();
    } else if (op == "/") {
      if (x->i == INT64_MIN && y->i == -1) return overflow();
      if (x->i % y->i == 0) return marked(Value::Int(x->i / y->i));
      return marked(Value::Real(static_cast<double>(x->i) / static_cast<double>(y->i)));
    } else if (op == "%") {
      if (y->i == -1) return marked(Value::Int(0));
      r = x->i % y->i;
    }
    return marked(Value::Int(r));
  }
  double p = x->AsDouble(), q = y->AsDouble(), r = 0;
  if (op == "+") {
    r = p + q;
  } else if (op == "-") {
    r = p - q;
  } else if (op == "*") {
    r = p * q;
  } else if (op == "/") {
    r = p / q;
  } else {
    r = std::fmod(p, q);
  }
  if (!std::isfinite(r)) return overflow();
  return marked(Value::Real(r));
}

Value Evaluator::Conditional(const Node& n) {
  Value c = Eval(*n.kids[0]);
  std::optional<bool> cond;
  if (!c.is_unknown()) {
    cond = ToBool(c);
    if (!cond) {
      Error(*n.kids[0], "type_mismatch", "the condition must be a bool, not " + Noun(c));
      return Value::Unknown();
    }
  }
  // Both branches are evaluated, but as HCL does, only the taken one's
  // errors count when the condition is known: `x == null ? "" : x.name` is
  // how a possibly null value is read. With the condition unknown, both
  // branches must work.
  auto branch = [&](const Node& b, std::vector<EvalError>& errs, bool& failed) {
    size_t mark = errors_.size();
    bool before = failed_;
    failed_ = false;
    Value v = Eval(b);
    failed = failed_;
    failed_ = before;
    errs.assign(std::make_move_iterator(errors_.begin() + static_cast<std::ptrdiff_t>(mark)),
                std::make_move_iterator(errors_.end()));
    errors_.resize(mark);
    return v;
  };
  std::vector<EvalError> yes_errors, no_errors;
  bool yes_failed = false, no_failed = false;
  Value yes = branch(*n.kids[1], yes_errors, yes_failed);
  Value no = branch(*n.kids[2], no_errors, no_failed);
  auto keep = [&](std::vector<EvalError>& errs, bool failed) {
    for (EvalError& e : errs) errors_.push_back(std::move(e));
    failed_ = failed_ || failed;
  };
  if (!cond) {
    keep(yes_errors, yes_failed);
    keep(no_errors, no_failed);
    return CarryMarks(Value::Unknown(), c);
  }
  if (*cond) {
    keep(yes_errors, yes_failed);
    return yes.WithMarksOf(c);
  }
  keep(no_errors, no_failed);
  return no.WithMarksOf(c);
}

Value Evaluator::Call(const Node& n) {
  const FunctionSpec* fn = FindFunction(n.name);
  if (!fn) {
    std::vector<std::string> names;
    for (const auto& [name, spec] : Functions()) names.push_back(name);
    uint32_t name_end = n.begin + static_cast<uint32_t>(n.name.size());
    std::string hint = DidYouMean(n.name, names);
    if (n.name == "timestamp" || n.name == "uuid" || n.name == "bcrypt" ||
        n.name == "plantimestamp")
      hint = n.name +
             "() is left out on purpose: a plan made twice from the same inputs must be the same";
    ErrorAt(n.begin, name_end, "unknown_function", "there is no function named \"" + n.name + "\"",
            hint);
    for (const NodePtr& k : n.kids) Eval(*k);
    return Value::Unknown();
  }
  std::vector<Value> args;
  args.reserve(n.kids.size());
  for (const NodePtr& k : n.kids) {
    if (fn->marks && (n.name == "can" || n.name == "try")) {
      args.emplace_back();  // evaluated by the function itself
      continue;
    }
    args.push_back(Eval(*k));
  }
  if (n.expand_last && !args.empty()) {
    Value last = std::move(args.back());
    args.pop_back();
    if (last.is_unknown()) return Value::Unknown();
    if (!last.is_sequence()) {
      Error(*n.kids.back(), "type_mismatch", "\"...\" expands a list or set, not " + Noun(last));
      return Value::Unknown();
    }
    for (const Value& item : last.items()) args.push_back(item.WithMarksOf(last));
  }
  int count = static_cast<int>(args.size());
  if (count < fn->min_args || (fn->max_args >= 0 && count > fn->max_args)) {
    std::string want = fn->min_args == fn->max_args ? std::to_string(fn->min_args)
                       : fn->max_args < 0
                           ? "at least " + std::to_string(fn->min_args)
                           : std::to_string(fn->min_args) + " to " + std::to_string(fn->max_args);
    Error(n, "wrong_argument_count",
          n.name + "() takes " + want + " argument" +
              (fn->max_args == 1 && fn->min_args == 1 ? "" : "s") + ", not " +
              std::to_string(count),
          fn->signature.empty() ? "" : "usage: " + n.name + "(" + fn->signature + ")");
    return Value::Unknown();
  }
  if (failed_ && !fn->marks) {
    // An argument failed (reported): the call adds nothing but noise.
    for (const Value& a : args) {
      if (a.is_unknown()) return Value::Unknown();
    }
  }
  Value marks;  // collects the arguments' marks
  std::vector<Value> plain;
  if (!fn->marks) {
    plain.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      marks = CarryMarks(std::move(marks), args[i]);
      if (!fn->unknown_args && args[i].ContainsUnknown())
        return CarryMarks(Value::Unknown(), marks);
      if (!fn->null_args && args[i].is_null()) {
        const Node& at = i < n.kids.size() ? *n.kids[i] : n;
        Error(at, "invalid_function_argument",
              "argument " + std::to_string(i + 1) + " of " + n.name + "() must not be null");
        return Value::Unknown();
      }
      plain.push_back(args[i].DeepUnmarked());
    }
  }
  CallContext cx(*this, n);
  bool before = failed_;
  failed_ = false;
  Value r = fn->impl(fn->marks ? args : plain, cx);
  bool call_failed = failed_;
  failed_ = before || call_failed;
  if (call_failed) return Value::Unknown();
  return fn->marks ? r : CarryMarks(std::move(r), marks);
}

Value Evaluator::For(const Node& n) {
  Value coll = Eval(*n.kids[0]);
  if (coll.is_unknown()) {
    // Check the body once with stand-ins, for mistakes that do not depend
    // on the elements.
    bindings_.push_back({n.name, {Value::Unknown(), true, nullptr}});
    if (!n.key_var.empty()) bindings_.push_back({n.key_var, {Value::Unknown(), true, nullptr}});
    if (n.kids[1]) Eval(*n.kids[1]);
    Eval(*n.kids[2]);
    if (n.kids[3]) Eval(*n.kids[3]);
    bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
    return CarryMarks(Value::Unknown(), coll);
  }
  if (!coll.is_collection()) {
    Error(*n.kids[0], "type_mismatch", "for iterates over a list, set or map, not " + Noun(coll));
    return Value::Unknown();
  }
  List out_list;
  Map out_map;
  std::map<std::string, List, std::less<>> groups;
  bool unknown = false;
  auto visit = [&](const Value& key, const Value& value) {
    bindings_.push_back({n.name, {value.WithMarksOf(coll), false, nullptr}});
    if (!n.key_var.empty()) bindings_.push_back({n.key_var, {key, false, nullptr}});
    struct Pop {
      Evaluator& ev;
      size_t count;
      ~Pop() { ev.bindings_.resize(ev.bindings_.size() - count); }
    } pop{*this, n.key_var.empty() ? size_t{1} : size_t{2}};
    if (n.kids[3]) {
      Value c = Eval(*n.kids[3]);
      if (c.is_unknown()) {
        unknown = true;
        return;
      }
      auto keep = ToBool(c);
      if (!keep) {
        Error(*n.kids[3], "type_mismatch", "the condition of a for must be a bool, not " + Noun(c));
        return;
      }
      if (!*keep) return;
    }
    Value v = Eval(*n.kids[2]);
    if (!n.flag) {
      out_list.push_back(std::move(v));
      return;
    }
    Value k = Eval(*n.kids[1]);
    if (k.is_unknown()) {
      unknown = true;
      return;
    }
    auto ks = KeyString(k);
    if (!ks) {
      Error(*n.kids[1], "type_mismatch", "a for's key must be a string, not " + Noun(k));
      return;
    }
    if (n.expand_last) {
      groups[*ks].push_back(std::move(v));
    } else if (!out_map.emplace(*ks, std::move(v)).second) {
      Error(*n.kids[1], "duplicate_key", "two elements have the key \"" + *ks + "\"",
            "to group the values of a key into a list, write \"...\" after the value");
    }
  };
  if (coll.is_map()) {
    for (const auto& [k, v] : coll.entries()) visit(Value::String(k), v);
  } else if (coll.is_set()) {
    for (const Value& v : coll.items()) visit(v, v);
  } else {
    int64_t i = 0;
    for (const Value& v : coll.items()) visit(Value::Int(i++), v);
  }
  if (unknown) return CarryMarks(Value::Unknown(), coll);
  if (!n.flag) return Value::MakeList(std::move(out_list));
  if (n.expand_last) {
    for (auto& [k, items] : groups) out_map.emplace(k, Value::MakeList(std::move(items)));
  }
  return Value::MakeMap(std::move(out_map));
}

namespace {

// The innermost step of a splat's traversal when it reads an attribute of
// the element: `[*].id...` gives "id".
const Node* FirstSplatStep(const Node* trav) {
  const Node* step = nullptr;
  while (trav && trav->kind != NodeKind::kSplatItem) {
    step = trav;
    trav = trav->kids[0].get();
  }
  return step;
}

// `trav` with its kSplatItem replaced by `item`.
NodePtr SubstituteSplatItem(const Node& trav, const NodePtr& item) {
  if (trav.kind == NodeKind::kSplatItem) return item;
  auto copy = std::make_shared<Node>(trav);
  copy->kids[0] = SubstituteSplatItem(*trav.kids[0], item);
  return copy;
}

// `trav` with its step `first` (an attribute of the element) taken as the
// element itself: what is left to apply to each attribute value.
NodePtr AfterFirstStep(const Node& trav, const Node* first) {
  if (&trav == first) {
    auto item = std::make_shared<Node>();
    item->kind = NodeKind::kSplatItem;
    return item;
  }
  auto copy = std::make_shared<Node>(trav);
  copy->kids[0] = AfterFirstStep(*trav.kids[0], first);
  return copy;
}

}  // namespace

Value Evaluator::Splat(const Node& n) {
  const Node* first = n.kids[1] ? FirstSplatStep(n.kids[1].get()) : nullptr;
  if (first && first->kind == NodeKind::kGetAttr &&
      (n.kids[0]->kind == NodeKind::kGetAttr || n.kids[0]->kind == NodeKind::kIndex)) {
    Operand o = Chain(*n.kids[0]);
    if (o.kind == Operand::kResource) {
      if (auto all = scope_.ResourceSplat(o.module, o.a, o.b, first->name, n, *this)) {
        if (all->is_unknown() || first == n.kids[1].get()) return *all;
        // The rest of the traversal, on each element.
        NodePtr rest = AfterFirstStep(*n.kids[1], first);
        List out;
        for (const Value& item : all->items()) {
          Value saved = std::move(splat_item_);
          splat_item_ = item;
          out.push_back(Eval(*rest));
          splat_item_ = std::move(saved);
        }
        return Value::MakeList(std::move(out)).WithMarksOf(*all);
      }
    }
    Value source = Materialize(std::move(o), *n.kids[0]);
    return SplatOver(n, source);
  }
  return SplatOver(n, Eval(*n.kids[0]));
}

Value Evaluator::SplatOver(const Node& n, Value source) {
  if (source.is_unknown()) return source;
  auto apply = [&](const Value& item) {
    if (!n.kids[1]) return item;
    Value saved = std::move(splat_item_);
    splat_item_ = item;
    Value r = Eval(*n.kids[1]);
    splat_item_ = std::move(saved);
    return r;
  };
  if (source.is_null()) return Value::MakeList({});
  if (!source.is_sequence()) return Value::MakeList({apply(source)}).WithMarksOf(source);
  List out;
  out.reserve(source.size());
  for (const Value& item : source.items()) out.push_back(apply(item.WithMarksOf(source)));
  return Value::MakeList(std::move(out)).WithMarksOf(source);
}

void Evaluator::TemplateAppend(const Node& part, std::string& out, Value& marks, bool& unknown) {
  if (part.kind == NodeKind::kLiteral && part.value.is_string()) {
    out += part.value.as_string();
    marks = marks.WithMarksOf(part.value);
    return;
  }
  if (part.kind == NodeKind::kTemplateIf) {
    Value c = Eval(*part.kids[0]);
    marks = CarryMarks(std::move(marks), c);
    if (c.is_unknown()) {
      unknown = true;
      return;
    }
    auto b = ToBool(c);
    if (!b) {
      Error(*part.kids[0], "type_mismatch",
            "the condition of an if must be a bool, not " + Noun(c));
      return;
    }
    const NodePtr& branch = *b ? part.kids[1] : part.kids[2];
    if (branch) {
      for (const NodePtr& k : branch->kids) TemplateAppend(*k, out, marks, unknown);
    }
    return;
  }
  if (part.kind == NodeKind::kTemplateFor) {
    TemplateFor(part, out, marks, unknown);
    return;
  }
  Value v = Eval(part);
  marks = CarryMarks(std::move(marks), v);
  if (v.is_unknown()) {
    unknown = true;
    return;
  }
  if (v.is_null()) {
    std::string what = Print(part);
    Error(part, "invalid_interpolation",
          "cannot interpolate " + (what.size() <= 60 ? what + ", which is null," : "null") +
              " into a string",
          "use coalesce() or a conditional to give a default");
    return;
  }
  auto s = ToStringValue(v);
  if (!s) {
    std::string what = Print(part);
    what = what.size() <= 60 ? what + ", " + Noun(v) : Noun(v);
    Error(part, "invalid_interpolation", "cannot interpolate " + what + ", into a string",
          "use it as the whole value (\"${...}\" alone), or join() or jsonencode() it");
    return;
  }
  out += *s;
}

Value Evaluator::TemplateFor(const Node& n, std::string& out, Value& marks, bool& unknown) {
  Value coll = Eval(*n.kids[0]);
  marks = CarryMarks(std::move(marks), coll);
  if (coll.is_unknown()) {
    unknown = true;
    return Value();
  }
  if (!coll.is_collection()) {
    Error(*n.kids[0], "type_mismatch", "for iterates over a list, set or map, not " + Noun(coll));
    return Value();
  }
  auto visit = [&](const Value& key, const Value& value) {
    bindings_.push_back({n.name, {value, false, nullptr}});
    if (!n.key_var.empty()) bindings_.push_back({n.key_var, {key, false, nullptr}});
    for (const NodePtr& k : n.kids[1]->kids) TemplateAppend(*k, out, marks, unknown);
    bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
  };
  if (coll.is_map()) {
    for (const auto& [k, v] : coll.entries()) visit(Value::String(k), v);
  } else {
    int64_t i = 0;
    for (const Value& v : coll.items()) visit(coll.is_set() ? v : Value::Int(i++), v);
  }
  return Value();
}

Value Evaluator::Template(const Node& n) {
  std::string out;
  Value marks;
  bool unknown = false;
  if (n.kind == NodeKind::kTemplate) {
    for (const NodePtr& k : n.kids) TemplateAppend(*k, out, marks, unknown);
  } else {
    TemplateAppend(n, out, marks, unknown);
  }
  Value r = unknown ? Value::Unknown() : Value::String(std::move(out));
  return CarryMarks(std::move(r), marks);
}

// ---- residuals ---------------------------------------------------------------

namespace {

NodePtr Rebuilt(const Node& n, std::vector<NodePtr> kids) {
  auto copy = std::make_shared<Node>(n);
  copy->kids = std::move(kids);
  return copy;
}

}  // namespace

NodePtr Evaluator::Residual(const Node& n) {
  Value v;
  {
    Silence quiet(silenced_);
    bool before = failed_;
    v = Eval(n);
    failed_ = before;
  }
  if (v.WhollyKnown()) return MakeLiteral(v, n.begin, n.end);
  switch (n.kind) {
    case NodeKind::kVariable:
      for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
        if (it->first != n.name) continue;
        if (it->second.residual) return it->second.residual;
        return std::make_shared<Node>(n);
      }
      return std::make_shared<Node>(n);
    case NodeKind::kGetAttr:
    case NodeKind::kIndex:
      return ResidualChain(n);
    case NodeKind::kFor:
      return ResidualFor(n);
    case NodeKind::kConditional: {
      Value c;
      {
        Silence quiet(silenced_);
        c = Eval(*n.kids[0]);
      }
      if (c.is_bool() && !c.sensitive()) return Residual(*n.kids[c.as_bool() ? 1 : 2]);
      return Rebuilt(n, {Residual(*n.kids[0]), Residual(*n.kids[1]), Residual(*n.kids[2])});
    }
    case NodeKind::kParens:
      return Residual(*n.kids[0]);
    case NodeKind::kSplatItem:
      return std::make_shared<Node>(n);
    case NodeKind::kSplat: {
      NodePtr source = Residual(*n.kids[0]);
      if (source->kind == NodeKind::kObject && n.kids[0]->kind != NodeKind::kObject) {
        // A for_each resource's instances: their values, in key order.
        auto values = std::make_shared<Node>(*source);
        values->kind = NodeKind::kTuple;
        values->kids.clear();
        for (size_t i = 1; i < source->kids.size(); i += 2) values->kids.push_back(source->kids[i]);
        source = values;
      }
      if (source->kind == NodeKind::kTuple && n.kids[1]) {
        // Over a list written out (a resource's instances): the traversal
        // of each element, so that each reads one instance.
        auto tuple = std::make_shared<Node>(*source);
        for (NodePtr& item : tuple->kids) item = SubstituteSplatItem(*n.kids[1], item);
        return tuple;
      }
      // The traversal is applied to elements only known later: it stays.
      return Rebuilt(n, {source, n.kids[1]});
    }
    case NodeKind::kTemplateFor: {
      auto copy = std::make_shared<Node>(n);
      bindings_.push_back({n.name, {Value::Unknown(), true, nullptr}});
      if (!n.key_var.empty()) bindings_.push_back({n.key_var, {Value::Unknown(), true, nullptr}});
      std::vector<NodePtr> body;
      for (const NodePtr& k : n.kids[1]->kids) body.push_back(Residual(*k));
      bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
      copy->kids = {Residual(*n.kids[0]), Rebuilt(*n.kids[1], std::move(body))};
      return copy;
    }
    default: {
      std::vector<NodePtr> kids;
      kids.reserve(n.kids.size());
      for (const NodePtr& k : n.kids) kids.push_back(k ? Residual(*k) : nullptr);
      if (n.kind == NodeKind::kTemplate) {
        // Neighbouring literal text merges again.
        std::vector<NodePtr> merged;
        // A template interpolated whole (a variable's residual) adds its
        // parts.
        std::vector<NodePtr> flat;
        for (NodePtr& k : kids) {
          if (k->kind == NodeKind::kTemplate) {
            flat.insert(flat.end(), k->kids.begin(), k->kids.end());
          } else {
            flat.push_back(std::move(k));
          }
        }
        kids = std::move(flat);
        for (NodePtr& k : kids) {
          if (k->kind == NodeKind::kLiteral && k->value.is_string() && !k->value.sensitive() &&
              !merged.empty() && merged.back()->kind == NodeKind::kLiteral &&
              merged.back()->value.is_string() && !merged.back()->value.sensitive()) {
            merged.back() =
                MakeLiteral(Value::String(merged.back()->value.as_string() + k->value.as_string()));
          } else if (k->kind == NodeKind::kLiteral && !k->value.is_string() &&
                     ToStringValue(k->value) && !k->value.sensitive()) {
            // A known number or bool interpolated: text now.
            NodePtr text = MakeLiteral(Value::String(*ToStringValue(k->value)));
            if (!merged.empty() && merged.back()->kind == NodeKind::kLiteral &&
                merged.back()->value.is_string() && !merged.back()->value.sensitive()) {
              merged.back() = MakeLiteral(
                  Value::String(merged.back()->value.as_string() + text->value.as_string()));
            } else {
              merged.push_back(text);
            }
          } else {
            merged.push_back(std::move(k));
          }
        }
        kids = std::move(merged);
      }
      return Rebuilt(n, std::move(kids));
    }
  }
}

NodePtr Evaluator::ResidualChain(const Node& n) {
  Operand o;
  {
    Silence quiet(silenced_);
    bool before = failed_;
    o = Chain(n.kind == NodeKind::kGetAttr || n.kind == NodeKind::kIndex ? *n.kids[0] : n);
    failed_ = before;
  }
  NodePtr r;
  switch (o.kind) {
    case Operand::kRoot:
      if (n.kind == NodeKind::kGetAttr) r = scope_.ResidualNamed(o.a, n.name, n);
      break;
    case Operand::kResource:
      if (n.kind == NodeKind::kGetAttr) {
        r = scope_.ResidualResource(o.module, o.a, o.b, nullptr, &n.name, n);
      } else {
        Value key;
        {
          Silence quiet(silenced_);
          key = Eval(*n.kids[1]);
        }
        if (key.WhollyKnown()) r = scope_.ResidualResource(o.module, o.a, o.b, &key, nullptr, n);
      }
      break;
    case Operand::kInstance:
      if (n.kind == NodeKind::kGetAttr) {
        r = scope_.ResidualResource(o.module, o.a, o.b, &o.value, &n.name, n);
      }
      break;
    case Operand::kModule:
      if (n.kind == NodeKind::kGetAttr) {
        r = scope_.ResidualModule(o.a, nullptr, &n.name, n);
      } else {
        Value key;
        {
          Silence quiet(silenced_);
          key = Eval(*n.kids[1]);
        }
        if (key.WhollyKnown()) r = scope_.ResidualModule(o.a, &key, nullptr, n);
      }
      break;
    case Operand::kModuleInstance:
      if (n.kind == NodeKind::kGetAttr) r = scope_.ResidualModule(o.a, &o.value, &n.name, n);
      break;
    case Operand::kKind:
      // KIND.NAME used whole, not followed by an index or attribute.
      if (n.kind == NodeKind::kGetAttr)
        r = scope_.ResidualResource("", o.a, n.name, nullptr, nullptr, n);
      break;
    default:
      break;
  }
  if (r) return r;
  if (o.kind == Operand::kValue) {
    // A value's attribute or element: the value part is residual already.
    if (n.kind == NodeKind::kGetAttr) return Rebuilt(n, {Residual(*n.kids[0])});
    return Rebuilt(n, {Residual(*n.kids[0]), Residual(*n.kids[1])});
  }
  if (n.kind == NodeKind::kIndex)
    return Rebuilt(n, {ResidualChain(*n.kids[0]), Residual(*n.kids[1])});
  if (n.kind == NodeKind::kGetAttr &&
      (n.kids[0]->kind == NodeKind::kGetAttr || n.kids[0]->kind == NodeKind::kIndex))
    return Rebuilt(n, {ResidualChain(*n.kids[0])});
  return std::make_shared<Node>(n);
}

NodePtr Evaluator::ResidualFor(const Node& n) {
  Value coll;
  {
    Silence quiet(silenced_);
    coll = Eval(*n.kids[0]);
  }
  auto copy = std::make_shared<Node>(n);
  // Unrolled only when every element's condition is known.
  bool conditions_known = true;
  if (!coll.is_unknown() && coll.is_collection() && n.kids[3]) {
    auto check = [&](const Value& key, const Value& value) {
      bindings_.push_back({n.name, {value, false, nullptr}});
      if (!n.key_var.empty()) bindings_.push_back({n.key_var, {key, false, nullptr}});
      Silence quiet(silenced_);
      Value c = Eval(*n.kids[3]);
      if (!c.WhollyKnown()) conditions_known = false;
      bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
    };
    if (coll.is_map()) {
      for (const auto& [k, v] : coll.entries()) check(Value::String(k), v);
    } else {
      int64_t i = 0;
      for (const Value& v : coll.items()) check(coll.is_set() ? v : Value::Int(i++), v);
    }
  }
  if (coll.is_unknown() || !coll.is_collection() || !conditions_known) {
    // The elements are not known: the body stays, with what it reads from
    // outside folded in and its own names kept.
    bindings_.push_back({n.name, {Value::Unknown(), true, nullptr}});
    if (!n.key_var.empty()) bindings_.push_back({n.key_var, {Value::Unknown(), true, nullptr}});
    std::vector<NodePtr> kids = {Residual(*n.kids[0])};
    for (size_t i = 1; i < n.kids.size(); ++i)
      kids.push_back(n.kids[i] ? Residual(*n.kids[i]) : nullptr);
    bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
    copy->kids = std::move(kids);
    return copy;
  }
  // The elements are known, some results are not: the for becomes the list
  // or object it makes, each element's expression residual.
  auto out = std::make_shared<Node>();
  out->kind = n.flag ? NodeKind::kObject : NodeKind::kTuple;
  out->begin = n.begin;
  out->end = n.end;
  std::map<std::string, std::vector<NodePtr>> groups;
  // Each element's own expression, for a value that is not wholly known:
  // the collection's residual, indexed (or its element, when it is written
  // out as a list or object).
  NodePtr coll_residual = coll.WhollyKnown() ? nullptr : Residual(*n.kids[0]);
  size_t position = 0;
  auto element = [&](const Value& key) -> NodePtr {
    size_t at = position++;
    if (!coll_residual) return nullptr;
    if (coll_residual->kind == NodeKind::kTuple && coll.is_list() &&
        at < coll_residual->kids.size())
      return coll_residual->kids[at];
    if (coll_residual->kind == NodeKind::kObject && coll.is_map()) {
      for (size_t i = 0; i + 1 < coll_residual->kids.size(); i += 2) {
        const Node& k = *coll_residual->kids[i];
        if (k.kind == NodeKind::kLiteral && Equal(k.value, key)) return coll_residual->kids[i + 1];
      }
    }
    if (coll.is_set()) {
      auto list = std::make_shared<Node>();
      list->kind = NodeKind::kCall;
      list->name = "tolist";
      list->kids = {coll_residual};
      return MakeIndex(list, MakeLiteral(Value::Int(static_cast<int64_t>(at))));
    }
    return MakeIndex(coll_residual, MakeLiteral(key));
  };
  auto visit = [&](const Value& key, const Value& value) {
    NodePtr self = element(key);
    bindings_.push_back({n.name, {value.WithMarksOf(coll), false, self}});
    if (!n.key_var.empty()) bindings_.push_back({n.key_var, {key, false, nullptr}});
    bool keep = true;
    if (n.kids[3]) {
      Silence quiet(silenced_);
      Value c = Eval(*n.kids[3]);
      keep = c.is_bool() ? c.as_bool() : (c.is_string() && c.as_string() == "true");
    }
    if (keep) {
      NodePtr v = Residual(*n.kids[2]);
      if (n.flag) {
        NodePtr k = Residual(*n.kids[1]);
        if (n.expand_last && k->kind == NodeKind::kLiteral) {
          groups[*KeyString(k->value)].push_back(v);
        } else {
          out->kids.push_back(k);
          out->kids.push_back(v);
        }
      } else {
        out->kids.push_back(v);
      }
    }
    bindings_.resize(bindings_.size() - (n.key_var.empty() ? 1 : 2));
  };
  if (coll.is_map()) {
    for (const auto& [k, v] : coll.entries()) visit(Value::String(k), v);
  } else {
    int64_t i = 0;
    for (const Value& v : coll.items()) visit(coll.is_set() ? v : Value::Int(i++), v);
  }
  for (auto& [k, items] : groups) {
    auto tuple = std::make_shared<Node>();
    tuple->kind = NodeKind::kTuple;
    tuple->kids = std::move(items);
    out->kids.push_back(MakeLiteral(Value::String(k)));
    out->kids.push_back(tuple);
  }
  return out;
}

}  // namespace cairn::expr
