// Numeric functions: abs, ceil, floor, log, max, min, parseint, pow, signum,
// sum. Integers stay exact while they fit 64 bits; a result that would not
// fit is an error, as the arithmetic operators say (eval.h), never a
// silently rounded double. Results that are not finite (pow(0, -1)) are
// errors too: Cairn's numbers are finite.
#include <cmath>
#include <limits>

#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

// A double result as a number, or an error at the call when it is not finite.
Value FiniteResult(double d, CallContext& cx) {
  if (!std::isfinite(d)) {
    cx.Error("the result is not a finite number");
    return Value();
  }
  return Value::Real(d);
}

Value AbsFn(const std::vector<Value>& a, CallContext& cx) {
  auto n = ArgNumber(a[0], 0, cx);
  if (!n) return Value();
  if (n->is_int) {
    if (n->i == std::numeric_limits<int64_t>::min()) {
      cx.ArgError(0, "the absolute value of " + n->ToString() + " does not fit a 64-bit integer");
      return Value();
    }
    return Value::Int(n->i < 0 ? -n->i : n->i);
  }
  return Value::Real(std::fabs(n->d));
}

Value CeilFn(const std::vector<Value>& a, CallContext& cx) {
  auto n = ArgNumber(a[0], 0, cx);
  if (!n) return Value();
  return n->is_int ? Value::Num(*n) : Value::Real(std::ceil(n->d));
}

Value FloorFn(const std::vector<Value>& a, CallContext& cx) {
  auto n = ArgNumber(a[0], 0, cx);
  if (!n) return Value();
  return n->is_int ? Value::Num(*n) : Value::Real(std::floor(n->d));
}

Value LogFn(const std::vector<Value>& a, CallContext& cx) {
  auto x = ArgNumber(a[0], 0, cx);
  auto base = ArgNumber(a[1], 1, cx);
  if (!x || !base) return Value();
  return FiniteResult(std::log(x->AsDouble()) / std::log(base->AsDouble()), cx);
}

// max and min: the extreme of their arguments, kept as given (an integer
// stays an integer).
Value Extreme(const std::vector<Value>& a, CallContext& cx, bool want_max) {
  std::optional<Number> best;
  for (size_t i = 0; i < a.size(); ++i) {
    auto n = ArgNumber(a[i], i, cx);
    if (!n) return Value();
    if (!best) {
      best = n;
      continue;
    }
    int c = Compare(Value::Num(*n), Value::Num(*best));
    if (want_max ? c > 0 : c < 0) best = n;
  }
  return Value::Num(*best);
}

Value MaxFn(const std::vector<Value>& a, CallContext& cx) { return Extreme(a, cx, true); }
Value MinFn(const std::vector<Value>& a, CallContext& cx) { return Extreme(a, cx, false); }

// The value of digit `c` in parseint's alphabet for `base`: 0-9, then
// letters either case up to base 36, then a-z before A-Z above it (as
// Terraform, after Go's big.Int). -1 for a character that is no digit.
int DigitValue(char c, int base) {
  if (c >= '0' && c <= '9') return c - '0';
  if (base <= 36) {
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return -1;
  }
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 36;
  return -1;
}

Value ParseIntFn(const std::vector<Value>& a, CallContext& cx) {
  if (!a[0].is_string()) {
    cx.ArgError(0, "the first argument must be a string, not a " + std::string(a[0].type_name()));
    return Value();
  }
  auto base = ArgInt(a[1], 1, cx);
  if (!base) return Value();
  if (*base < 2 || *base > 62) {
    cx.ArgError(1, "the base must be a whole number from 2 to 62, not " + std::to_string(*base));
    return Value();
  }
  const std::string& s = a[0].as_string();
  auto cannot = [&] {
    cx.ArgError(0, "cannot parse \"" + s + "\" as a base " + std::to_string(*base) + " integer");
    return Value();
  };
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return cannot();
  // Accumulated as a negative number, which reaches INT64_MIN.
  int64_t acc = 0;
  for (; i < s.size(); ++i) {
    int d = DigitValue(s[i], static_cast<int>(*base));
    if (d < 0 || d >= *base) return cannot();
    if (__builtin_mul_overflow(acc, *base, &acc) || __builtin_sub_overflow(acc, d, &acc)) {
      cx.ArgError(
          0, "\"" + s + "\" in base " + std::to_string(*base) + " does not fit a 64-bit integer");
      return Value();
    }
  }
  if (!negative) {
    if (acc == std::numeric_limits<int64_t>::min()) {
      cx.ArgError(
          0, "\"" + s + "\" in base " + std::to_string(*base) + " does not fit a 64-bit integer");
      return Value();
    }
    acc = -acc;
  }
  return Value::Int(acc);
}

Value PowFn(const std::vector<Value>& a, CallContext& cx) {
  auto x = ArgNumber(a[0], 0, cx);
  auto y = ArgNumber(a[1], 1, cx);
  if (!x || !y) return Value();
  // An integer to a small whole power is computed exactly while it fits.
  if (x->is_int && y->is_int && y->i >= 0 && y->i <= 64) {
    int64_t r = 1;
    bool overflow = false;
    for (int64_t k = 0; k < y->i && !overflow; ++k) overflow = __builtin_mul_overflow(r, x->i, &r);
    if (!overflow) return Value::Int(r);
  }
  return FiniteResult(std::pow(x->AsDouble(), y->AsDouble()), cx);
}

Value SignumFn(const std::vector<Value>& a, CallContext& cx) {
  auto n = ArgNumber(a[0], 0, cx);
  if (!n) return Value();
  double d = n->AsDouble();
  return Value::Int(d > 0 ? 1 : (d < 0 ? -1 : 0));
}

Value SumFn(const std::vector<Value>& a, CallContext& cx) {
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  if (items->empty()) {
    cx.ArgError(0, "cannot sum an empty list");
    return Value();
  }
  int64_t isum = 0;
  double dsum = 0;
  bool is_int = true;
  for (const Value& item : *items) {
    if (item.is_null()) {
      cx.ArgError(0, "the list must hold numbers only, not null");
      return Value();
    }
    std::optional<Number> n;
    if (item.is_number()) n = item.as_number();
    if (item.is_string()) {
      n = ArgNumber(item, 0, cx);
      if (!n) return Value();
    }
    if (!n) {
      cx.ArgError(0, "the list must hold numbers only, not a " + std::string(item.type_name()));
      return Value();
    }
    if (is_int && n->is_int) {
      if (__builtin_add_overflow(isum, n->i, &isum)) {
        cx.ArgError(0, "the sum does not fit a 64-bit integer");
        return Value();
      }
      continue;
    }
    if (is_int) {
      dsum = static_cast<double>(isum);
      is_int = false;
    }
    dsum += n->AsDouble();
  }
  if (is_int) return Value::Int(isum);
  return FiniteResult(dsum, cx);
}

}  // namespace

void RegisterNumericFunctions(FunctionTable& t) {
  auto add = [&](const char* name, int min, int max, FunctionImpl f, const char* sig) {
    FunctionSpec s;
    s.min_args = min;
    s.max_args = max;
    s.impl = std::move(f);
    s.signature = sig;
    t[name] = std::move(s);
  };
  add("abs", 1, 1, AbsFn, "number");
  add("ceil", 1, 1, CeilFn, "number");
  add("floor", 1, 1, FloorFn, "number");
  add("log", 2, 2, LogFn, "number, base");
  add("max", 1, -1, MaxFn, "numbers...");
  add("min", 1, -1, MinFn, "numbers...");
  add("parseint", 2, 2, ParseIntFn, "string, base");
  add("pow", 2, 2, PowFn, "base, exponent");
  add("signum", 1, 1, SignumFn, "number");
  add("sum", 1, 1, SumFn, "list");
}

}  // namespace cairn::expr
