// Type conversion functions, can() and try(), sensitive() and nonsensitive().
#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

// Terraform's unification of a collection's elements: all of one primitive
// type stay as they are; strings mixed with numbers or bools all become
// strings; nulls fit anything; collections must match exactly.
std::optional<List> Unify(const List& items, size_t arg, CallContext& cx) {
  bool any_string = false, any_number = false, any_bool = false, any_collection = false;
  Type first_collection = Type::kNull;
  for (const Value& v : items) {
    if (v.is_string()) any_string = true;
    if (v.is_number()) any_number = true;
    if (v.is_bool()) any_bool = true;
    if (v.is_collection()) {
      if (any_collection && v.type() != first_collection) {
        cx.ArgError(arg, "all elements must be of one type: found a " +
                             std::string(Value::TypeName(first_collection)) + " and a " +
                             v.type_name());
        return std::nullopt;
      }
      any_collection = true;
      first_collection = v.type();
    }
  }
  if (any_collection && (any_string || any_number || any_bool)) {
    cx.ArgError(arg, "all elements must be of one type: found a " +
                         std::string(Value::TypeName(first_collection)) + " beside " +
                         (any_string   ? "a string"
                          : any_number ? "a number"
                                       : "a bool"));
    return std::nullopt;
  }
  if (any_number && any_bool && !any_string) {
    cx.ArgError(arg, "all elements must be of one type: found numbers and bools");
    return std::nullopt;
  }
  if (!any_string || (!any_number && !any_bool)) return items;
  List out;
  out.reserve(items.size());
  for (const Value& v : items) {
    out.push_back(v.is_null() || v.is_unknown() ? v
                                                : Value::String(*ToStringValue(v)).WithMarksOf(v));
  }
  return out;
}

Value ToStringFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  if (auto s = ToStringValue(a[0])) return Value::String(*s);
  cx.ArgError(0, "cannot convert a " + std::string(a[0].type_name()) + " to a string");
  return Value();
}

Value ToNumberFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  if (a[0].is_number()) return a[0];
  if (a[0].is_string()) {
    if (auto n = ArgNumber(a[0], 0, cx)) return Value::Num(*n);
    return Value();
  }
  cx.ArgError(0, "cannot convert a " + std::string(a[0].type_name()) + " to a number");
  return Value();
}

Value ToBoolFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  if (auto b = ArgBool(a[0], 0, cx)) return Value::Bool(*b);
  return Value();
}

Value ToListFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  auto unified = Unify(*items, 0, cx);
  return unified ? Value::MakeList(std::move(*unified)) : Value();
}

Value ToSetFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  auto unified = Unify(*items, 0, cx);
  return unified ? Value::MakeSet(std::move(*unified)) : Value();
}

Value ToMapFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_null()) return a[0];
  const Map* m = ArgMap(a[0], 0, cx);
  if (!m) return Value();
  List values;
  for (const auto& [k, v] : *m) values.push_back(v);
  auto unified = Unify(values, 0, cx);
  if (!unified) return Value();
  Map out;
  size_t i = 0;
  for (const auto& [k, v] : *m) out.emplace(k, (*unified)[i++]);
  return Value::MakeMap(std::move(out));
}

Value CanFn(const std::vector<Value>&, CallContext& cx) {
  bool failed = false;
  Value v = cx.evaluator().TryEval(*cx.call().kids[0], failed);
  if (failed) return Value::Bool(false);
  if (!v.WhollyKnown()) return Value::Unknown();
  return Value::Bool(true);
}

Value TryFn(const std::vector<Value>&, CallContext& cx) {
  for (const NodePtr& k : cx.call().kids) {
    bool failed = false;
    Value v = cx.evaluator().TryEval(*k, failed);
    if (failed) continue;
    // Whether it would fail once known cannot be said yet.
    if (!v.WhollyKnown()) return Value::Unknown();
    return v;
  }
  cx.Error("no expression succeeded; each of its arguments failed", "invalid_function_argument");
  return Value();
}

Value SensitiveFn(const std::vector<Value>& a, CallContext&) {
  return a[0].MarkedSensitive("sensitive()");
}

// An ephemeral value stays marked (value.h, kEphemeralOrigin).
Value NonSensitiveFn(const std::vector<Value>& a, CallContext&) {
  Value out = a[0].Unmarked();
  if (a[0].sensitive()) {
    for (const std::string& from : a[0].sensitive_from()) {
      if (IsEphemeralOrigin(from)) out = out.MarkedSensitive(from);
    }
  }
  return out;
}

}  // namespace

void RegisterTypeFunctions(FunctionTable& t) {
  auto one = [&](const char* name, FunctionImpl f, bool null_ok) {
    FunctionSpec s;
    s.min_args = s.max_args = 1;
    s.impl = std::move(f);
    s.null_args = null_ok;
    s.signature = "value";
    t[name] = std::move(s);
  };
  one("tostring", ToStringFn, true);
  one("tonumber", ToNumberFn, true);
  one("tobool", ToBoolFn, true);
  one("tolist", ToListFn, true);
  one("toset", ToSetFn, true);
  one("tomap", ToMapFn, true);

  FunctionSpec can;
  can.min_args = can.max_args = 1;
  can.impl = CanFn;
  can.marks = can.unknown_args = can.null_args = true;
  can.signature = "expression";
  t["can"] = can;

  FunctionSpec try_fn;
  try_fn.min_args = 1;
  try_fn.max_args = -1;
  try_fn.impl = TryFn;
  try_fn.marks = try_fn.unknown_args = try_fn.null_args = true;
  try_fn.signature = "expressions...";
  t["try"] = try_fn;

  for (const char* name : {"sensitive", "nonsensitive"}) {
    FunctionSpec s;
    s.min_args = s.max_args = 1;
    s.impl =
        std::string(name) == "sensitive" ? FunctionImpl(SensitiveFn) : FunctionImpl(NonSensitiveFn);
    s.marks = s.unknown_args = s.null_args = true;
    s.signature = "value";
    t[name] = s;
  }
}

}  // namespace cairn::expr
