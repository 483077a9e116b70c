// Collection functions: alltrue, anytrue, chunklist, coalesce, coalescelist,
// compact, concat, contains, distinct, element, flatten, index, keys,
// length, lookup, merge, one, range, reverse, setintersection, setproduct,
// setsubtract, setunion, slice, sort, transpose, values, zipmap.
//
// Unknown values. Most of these take the evaluator's default (an argument
// holding anything unknown makes the result unknown). Those whose result
// depends only on a collection's shape (`unknown_args`) handle unknowns
// themselves, so that what Terraform knows is known here too: length() of
// a list of unknowns, keys() of a map whose values are unknown, concat()
// of lists holding unknowns (a list of known length), element() of a list
// at a known index, and the like. The shape itself must be known: the
// collection (not unknown itself) and, for a set, every element, since
// unknown elements might turn out equal and merge.
#include <algorithm>
#include <cmath>

#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

constexpr size_t kMaxRangeLength = 1024;
constexpr size_t kMaxProductSize = 100000;

// Whether the shape (length, keys) of `v` is known.
bool ShapeKnown(const Value& v) {
  if (v.is_unknown()) return false;
  if (v.is_set()) return v.WhollyKnown();
  return true;
}

std::string ValueNoun(const Value& v) {
  if (v.is_null()) return "null";
  return std::string(v.is_unknown() ? "an " : "a ") + v.type_name();
}

// Strings mixed with numbers or bools all become strings, as Terraform
// unifies a collection's element types; false (reported) when collections
// are mixed with primitives, which do not unify.
bool UnifyPrimitives(List& items, size_t arg, CallContext& cx) {
  bool any_string = false, any_other_primitive = false, any_collection = false;
  for (const Value& v : items) {
    any_string |= v.is_string();
    any_other_primitive |= v.is_number() || v.is_bool();
    any_collection |= v.is_collection();
  }
  if (any_collection && (any_string || any_other_primitive)) {
    cx.ArgError(arg,
                "all elements must be of one type: found collections beside strings, "
                "numbers or bools");
    return false;
  }
  if (any_string && any_other_primitive) {
    for (Value& v : items) {
      if (v.is_number() || v.is_bool()) v = Value::String(*ToStringValue(v));
    }
  }
  return true;
}

// The elements of a list of strings (numbers and bools convert); nullopt
// (reported) for null or other elements.
std::optional<std::vector<std::string>> StringItems(const Value& v, size_t arg, CallContext& cx,
                                                    bool allow_null = false) {
  const List* items = ArgList(v, arg, cx);
  if (!items) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < items->size(); ++i) {
    const Value& item = (*items)[i];
    if (allow_null && item.is_null()) {
      out.emplace_back();
      continue;
    }
    auto s = ToStringValue(item);
    if (!s) {
      cx.ArgError(arg,
                  "element " + std::to_string(i) + " must be a string, not " + ValueNoun(item));
      return std::nullopt;
    }
    out.push_back(std::move(*s));
  }
  return out;
}

Value LengthFn(const std::vector<Value>& a, CallContext& cx) {
  const Value& v = a[0];
  if (!ShapeKnown(v)) return Value::Unknown();
  if (v.is_string()) return Value::Int(static_cast<int64_t>(Utf8Length(v.as_string())));
  if (v.is_collection()) return Value::Int(static_cast<int64_t>(v.size()));
  cx.ArgError(0, "the argument must be a string, list, set or map, not " + ValueNoun(v));
  return Value();
}

// alltrue and anytrue: a known answer wins over unknown elements (any false
// element makes alltrue false whatever the others are).
Value AllAnyTrue(const std::vector<Value>& a, CallContext& cx, bool all) {
  if (a[0].is_unknown()) return Value::Unknown();
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  bool unknown = false;
  for (size_t i = 0; i < items->size(); ++i) {
    const Value& item = (*items)[i];
    if (item.is_unknown()) {
      unknown = true;
      continue;
    }
    bool b = false;
    if (item.is_null()) {
      b = false;
    } else if (item.is_bool()) {
      b = item.as_bool();
    } else if (item.is_string() && (item.as_string() == "true" || item.as_string() == "false")) {
      b = item.as_string() == "true";
    } else {
      cx.ArgError(0, "element " + std::to_string(i) + " must be a bool, not " + ValueNoun(item));
      return Value();
    }
    if (all && !b) return Value::Bool(false);
    if (!all && b) return Value::Bool(true);
  }
  if (unknown) return Value::Unknown();
  return Value::Bool(all);
}

Value AllTrueFn(const std::vector<Value>& a, CallContext& cx) { return AllAnyTrue(a, cx, true); }
Value AnyTrueFn(const std::vector<Value>& a, CallContext& cx) { return AllAnyTrue(a, cx, false); }

Value ChunkListFn(const std::vector<Value>& a, CallContext& cx) {
  if (!ShapeKnown(a[0]) || !a[1].WhollyKnown()) return Value::Unknown();
  const List* items = ArgList(a[0], 0, cx);
  auto size = ArgInt(a[1], 1, cx);
  if (!items || !size) return Value();
  if (*size < 0) {
    cx.ArgError(1, "the size argument must be positive");
    return Value();
  }
  List out;
  if (items->empty()) return Value::MakeList({});
  if (*size == 0) return Value::MakeList({Value::MakeList(*items)});
  for (size_t i = 0; i < items->size(); i += static_cast<size_t>(*size)) {
    size_t end = std::min(items->size(), i + static_cast<size_t>(*size));
    out.push_back(Value::MakeList(List(items->begin() + static_cast<ptrdiff_t>(i),
                                       items->begin() + static_cast<ptrdiff_t>(end))));
  }
  return Value::MakeList(std::move(out));
}

// coalesce(vals...): the first argument that is neither null nor "", after
// Terraform's unification of the arguments' types. Known as soon as such an
// argument comes before any unknown one.
Value CoalesceFn(const std::vector<Value>& a, CallContext& cx) {
  List known;
  for (const Value& v : a)
    if (!v.is_unknown() && !v.is_null()) known.push_back(v);
  bool any_string = false, any_number = false, any_bool = false, any_collection = false;
  for (const Value& v : known) {
    any_string |= v.is_string();
    any_number |= v.is_number();
    any_bool |= v.is_bool();
    any_collection |= v.is_collection();
  }
  if ((any_collection && (any_string || any_number || any_bool)) ||
      (!any_string && any_number && any_bool)) {
    cx.Error("all arguments must have the same type");
    return Value();
  }
  for (const Value& v : a) {
    if (v.is_unknown()) return Value::Unknown();
    if (v.is_null()) continue;
    Value r = any_string && !v.is_string() ? Value::String(*ToStringValue(v)) : v;
    if (r.is_string() && r.as_string().empty()) continue;
    if (!r.WhollyKnown()) return Value::Unknown();
    return r;
  }
  cx.Error("no non-null, non-empty-string arguments");
  return Value();
}

Value CoalesceListFn(const std::vector<Value>& a, CallContext& cx) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ShapeKnown(a[i])) return Value::Unknown();
    if (a[i].is_null()) continue;
    if (!a[i].is_sequence()) {
      cx.ArgError(i, "coalescelist() arguments must be lists, not " + ValueNoun(a[i]));
      return Value();
    }
    if (a[i].size() > 0) return a[i].is_list() ? a[i] : Value::MakeList(a[i].items());
  }
  cx.Error("no non-null arguments");
  return Value();
}

Value CompactFn(const std::vector<Value>& a, CallContext& cx) {
  auto items = StringItems(a[0], 0, cx, /*allow_null=*/true);
  if (!items) return Value();
  List out;
  for (std::string& s : *items)
    if (!s.empty()) out.push_back(Value::String(std::move(s)));
  return Value::MakeList(std::move(out));
}

Value ConcatFn(const std::vector<Value>& a, CallContext& cx) {
  List out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ShapeKnown(a[i])) return Value::Unknown();
    const List* items = ArgList(a[i], i, cx);
    if (!items) return Value();
    out.insert(out.end(), items->begin(), items->end());
  }
  return Value::MakeList(std::move(out));
}

Value ContainsFn(const std::vector<Value>& a, CallContext& cx) {
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  for (const Value& item : *items)
    if (Equal(item, a[1])) return Value::Bool(true);
  return Value::Bool(false);
}

Value DistinctFn(const std::vector<Value>& a, CallContext& cx) {
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  List out;
  for (const Value& item : *items) {
    if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return Equal(o, item); }))
      out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

Value ElementFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown() || !a[1].WhollyKnown()) return Value::Unknown();
  if (a[0].is_set()) {
    cx.ArgError(0,
                "cannot read elements from a set, whose elements have no order (convert it "
                "with tolist())");
    return Value();
  }
  const List* items = ArgList(a[0], 0, cx);
  auto index = ArgInt(a[1], 1, cx);
  if (!items || !index) return Value();
  if (items->empty()) {
    cx.ArgError(0, "cannot use element function with an empty list");
    return Value();
  }
  int64_t n = static_cast<int64_t>(items->size());
  return (*items)[static_cast<size_t>(((*index % n) + n) % n)];
}

void Flatten(const List& items, List& out) {
  for (const Value& item : items) {
    if (item.is_sequence()) {
      Flatten(item.items(), out);
    } else {
      out.push_back(item);
    }
  }
}

Value FlattenFn(const std::vector<Value>& a, CallContext& cx) {
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  List out;
  Flatten(*items, out);
  return Value::MakeList(std::move(out));
}

Value IndexFn(const std::vector<Value>& a, CallContext& cx) {
  if (!a[0].is_list()) {
    cx.ArgError(0, "the first argument must be a list, not " + ValueNoun(a[0]));
    return Value();
  }
  const List& items = a[0].items();
  if (items.empty()) {
    cx.ArgError(0, "cannot search an empty list");
    return Value();
  }
  for (size_t i = 0; i < items.size(); ++i)
    if (Equal(items[i], a[1])) return Value::Int(static_cast<int64_t>(i));
  cx.ArgError(1, "item not found");
  return Value();
}

Value KeysFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown()) return Value::Unknown();
  const Map* m = ArgMap(a[0], 0, cx);
  if (!m) return Value();
  List out;
  for (const auto& [k, v] : *m) out.push_back(Value::String(k));
  return Value::MakeList(std::move(out));
}

Value ValuesFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown()) return Value::Unknown();
  const Map* m = ArgMap(a[0], 0, cx);
  if (!m) return Value();
  List out;
  for (const auto& [k, v] : *m) out.push_back(v);
  return Value::MakeList(std::move(out));
}

Value LookupFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown() || !a[1].WhollyKnown()) return Value::Unknown();
  const Map* m = ArgMap(a[0], 0, cx);
  auto key = ArgString(a[1], 1, cx);
  if (!m || !key) return Value();
  auto it = m->find(*key);
  if (it != m->end()) return it->second;
  if (a.size() > 2) return a[2];
  cx.ArgError(1, "the map has no key \"" + *key + "\" (give lookup() a default)");
  return Value();
}

Value MergeFn(const std::vector<Value>& a, CallContext& cx) {
  Map out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_unknown()) return Value::Unknown();
    if (a[i].is_null()) continue;
    const Map* m = ArgMap(a[i], i, cx);
    if (!m) return Value();
    for (const auto& [k, v] : *m) out.insert_or_assign(k, v);
  }
  return Value::MakeMap(std::move(out));
}

Value OneFn(const std::vector<Value>& a, CallContext& cx) {
  if (!ShapeKnown(a[0])) return Value::Unknown();
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  if (items->empty()) return Value::Null();
  if (items->size() == 1) return items->front();
  cx.ArgError(0, "must be a list, set, or tuple value with either zero or one elements, not " +
                     std::to_string(items->size()));
  return Value();
}

// range(limit), range(start, limit), range(start, limit, step), at most
// kMaxRangeLength numbers. Elements are start + i * step (not a running
// sum), so that fractional steps do not drift.
Value RangeFn(const std::vector<Value>& a, CallContext& cx) {
  std::vector<Number> n;
  for (size_t i = 0; i < a.size(); ++i) {
    auto v = ArgNumber(a[i], i, cx);
    if (!v) return Value();
    n.push_back(*v);
  }
  Number start = Number::Int(0), limit, step = Number::Int(1);
  if (n.size() == 1) {
    limit = n[0];
  } else {
    start = n[0];
    limit = n[1];
  }
  if (n.size() == 3) {
    step = n[2];
  } else if (limit.AsDouble() < start.AsDouble()) {
    step = Number::Int(-1);
  }
  double s = start.AsDouble(), l = limit.AsDouble(), st = step.AsDouble();
  if (st == 0) {
    cx.ArgError(2, "step must not be zero");
    return Value();
  }
  if (st < 0 && l > s) {
    cx.ArgError(1, "end must be less than start when step is negative");
    return Value();
  }
  if (st > 0 && l < s) {
    cx.ArgError(1, "end must be greater than start when step is positive");
    return Value();
  }
  bool ints = start.is_int && limit.is_int && step.is_int;
  List out;
  for (size_t i = 0;; ++i) {
    Number v;
    if (ints) {
      int64_t x = 0;
      if (__builtin_mul_overflow(static_cast<int64_t>(i), step.i, &x) ||
          __builtin_add_overflow(start.i, x, &x))
        break;
      v = Number::Int(x);
    } else {
      v = Number::Real(s + static_cast<double>(i) * st);
    }
    double d = v.AsDouble();
    if (st > 0 ? d >= l : d <= l) break;
    if (out.size() >= kMaxRangeLength) {
      cx.Error("more than " + std::to_string(kMaxRangeLength) +
               " values were generated; either decrease the difference between start and end "
               "or use a smaller step");
      return Value();
    }
    out.push_back(Value::Num(v));
  }
  return Value::MakeList(std::move(out));
}

Value ReverseFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown()) return Value::Unknown();
  if (a[0].is_set()) {
    cx.ArgError(0, "can only reverse lists, not a set, whose elements have no order");
    return Value();
  }
  const List* items = ArgList(a[0], 0, cx);
  if (!items) return Value();
  return Value::MakeList(List(items->rbegin(), items->rend()));
}

// The arguments' elements, unified across all of them, one list per
// argument; nullopt (reported) when an argument is no list or set.
std::optional<std::vector<List>> SetArgs(const std::vector<Value>& a, CallContext& cx) {
  List all;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < a.size(); ++i) {
    const List* items = ArgList(a[i], i, cx);
    if (!items) return std::nullopt;
    all.insert(all.end(), items->begin(), items->end());
    sizes.push_back(items->size());
  }
  if (!UnifyPrimitives(all, 0, cx)) return std::nullopt;
  std::vector<List> out;
  size_t at = 0;
  for (size_t size : sizes) {
    out.emplace_back(all.begin() + static_cast<ptrdiff_t>(at),
                     all.begin() + static_cast<ptrdiff_t>(at + size));
    at += size;
  }
  return out;
}

bool InSet(const Value& set, const Value& v) {
  const List& items = set.items();
  return std::binary_search(items.begin(), items.end(), v,
                            [](const Value& x, const Value& y) { return Compare(x, y) < 0; });
}

Value SetIntersectionFn(const std::vector<Value>& a, CallContext& cx) {
  auto sets = SetArgs(a, cx);
  if (!sets) return Value();
  List out;
  std::vector<Value> others;
  for (size_t i = 1; i < sets->size(); ++i) others.push_back(Value::MakeSet((*sets)[i]));
  for (const Value& v : (*sets)[0]) {
    if (std::all_of(others.begin(), others.end(), [&](const Value& s) { return InSet(s, v); }))
      out.push_back(v);
  }
  return Value::MakeSet(std::move(out));
}

Value SetUnionFn(const std::vector<Value>& a, CallContext& cx) {
  auto sets = SetArgs(a, cx);
  if (!sets) return Value();
  List out;
  for (const List& s : *sets) out.insert(out.end(), s.begin(), s.end());
  return Value::MakeSet(std::move(out));
}

Value SetSubtractFn(const std::vector<Value>& a, CallContext& cx) {
  auto sets = SetArgs(a, cx);
  if (!sets) return Value();
  Value remove = Value::MakeSet((*sets)[1]);
  List out;
  for (const Value& v : (*sets)[0])
    if (!InSet(remove, v)) out.push_back(v);
  return Value::MakeSet(std::move(out));
}

// setproduct(sets...): every combination, one element from each argument.
// A list when every argument is a list (in their order), else a set.
Value SetProductFn(const std::vector<Value>& a, CallContext& cx) {
  bool all_lists = true;
  std::vector<List> args;
  for (size_t i = 0; i < a.size(); ++i) {
    const List* items = ArgList(a[i], i, cx);
    if (!items) return Value();
    all_lists &= a[i].is_list();
    List unified = *items;
    if (!UnifyPrimitives(unified, i, cx)) return Value();
    args.push_back(std::move(unified));
  }
  size_t total = 1;
  for (const List& l : args) {
    if (l.empty()) return all_lists ? Value::MakeList({}) : Value::MakeSet({});
    if (__builtin_mul_overflow(total, l.size(), &total) || total > kMaxProductSize) {
      cx.Error("the product would have more than " + std::to_string(kMaxProductSize) + " elements");
      return Value();
    }
  }
  List out;
  out.reserve(total);
  std::vector<size_t> at(args.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    List combo;
    for (size_t i = 0; i < args.size(); ++i) combo.push_back(args[i][at[i]]);
    out.push_back(Value::MakeList(std::move(combo)));
    for (size_t i = args.size(); i-- > 0;) {
      if (++at[i] < args[i].size()) break;
      at[i] = 0;
    }
  }
  return all_lists ? Value::MakeList(std::move(out)) : Value::MakeSet(std::move(out));
}

Value SliceFn(const std::vector<Value>& a, CallContext& cx) {
  if (a[0].is_unknown() || !a[1].WhollyKnown() || !a[2].WhollyKnown()) return Value::Unknown();
  if (a[0].is_set()) {
    cx.ArgError(0,
                "cannot slice a set, because its elements do not have indices; convert it "
                "with tolist() if the order of the result does not matter");
    return Value();
  }
  const List* items = ArgList(a[0], 0, cx);
  auto start = ArgInt(a[1], 1, cx);
  auto end = ArgInt(a[2], 2, cx);
  if (!items || !start || !end) return Value();
  int64_t n = static_cast<int64_t>(items->size());
  if (*start < 0) {
    cx.ArgError(1, "start index must not be less than zero");
  } else if (*start > n) {
    cx.ArgError(1, "start index must not be greater than the length of the list");
  } else if (*end < 0) {
    cx.ArgError(2, "end index must not be less than zero");
  } else if (*end > n) {
    cx.ArgError(2, "end index must not be greater than the length of the list");
  } else if (*start > *end) {
    cx.ArgError(1, "start index must not be greater than end index");
  } else {
    return Value::MakeList(
        List(items->begin() + *start, items->begin() + static_cast<ptrdiff_t>(*end)));
  }
  return Value();
}

Value SortFn(const std::vector<Value>& a, CallContext& cx) {
  auto items = StringItems(a[0], 0, cx);
  if (!items) return Value();
  std::sort(items->begin(), items->end());
  List out;
  for (std::string& s : *items) out.push_back(Value::String(std::move(s)));
  return Value::MakeList(std::move(out));
}

Value TransposeFn(const std::vector<Value>& a, CallContext& cx) {
  const Map* m = ArgMap(a[0], 0, cx);
  if (!m) return Value();
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [k, list] : *m) {
    if (!list.is_sequence()) {
      cx.ArgError(0,
                  "input must be a map of lists of strings: \"" + k + "\" is " + ValueNoun(list));
      return Value();
    }
    for (const Value& item : list.items()) {
      auto s = ToStringValue(item);
      if (!s) {
        cx.ArgError(
            0, "input must be a map of lists of strings: \"" + k + "\" holds " + ValueNoun(item));
        return Value();
      }
      out[*s].push_back(k);
    }
  }
  Map result;
  for (auto& [k, keys] : out) {
    std::sort(keys.begin(), keys.end());
    List l;
    for (const std::string& s : keys) l.push_back(Value::String(s));
    result.emplace(k, Value::MakeList(std::move(l)));
  }
  return Value::MakeMap(std::move(result));
}

Value ZipMapFn(const std::vector<Value>& a, CallContext& cx) {
  if (!a[0].WhollyKnown() || !ShapeKnown(a[1])) return Value::Unknown();
  auto keys = StringItems(a[0], 0, cx);
  const List* values = ArgList(a[1], 1, cx);
  if (!keys || !values) return Value();
  if (keys->size() != values->size()) {
    cx.Error("number of keys (" + std::to_string(keys->size()) +
             ") does not match number of values (" + std::to_string(values->size()) + ")");
    return Value();
  }
  Map out;
  for (size_t i = 0; i < keys->size(); ++i) out.insert_or_assign((*keys)[i], (*values)[i]);
  return Value::MakeMap(std::move(out));
}

}  // namespace

void RegisterCollectionFunctions(FunctionTable& t) {
  struct Options {
    bool unknown_args = false;
    bool null_args = false;
  };
  auto add = [&](const char* name, int min, int max, FunctionImpl f, const char* sig,
                 Options o = {}) {
    FunctionSpec s;
    s.min_args = min;
    s.max_args = max;
    s.impl = std::move(f);
    s.signature = sig;
    s.unknown_args = o.unknown_args;
    s.null_args = o.null_args;
    t[name] = std::move(s);
  };
  const Options unknowns{.unknown_args = true};
  add("alltrue", 1, 1, AllTrueFn, "list", unknowns);
  add("anytrue", 1, 1, AnyTrueFn, "list", unknowns);
  add("chunklist", 2, 2, ChunkListFn, "list, chunk_size", unknowns);
  add("coalesce", 1, -1, CoalesceFn, "values...", {.unknown_args = true, .null_args = true});
  add("coalescelist", 1, -1, CoalesceListFn, "lists...", {.unknown_args = true, .null_args = true});
  add("compact", 1, 1, CompactFn, "list");
  add("concat", 1, -1, ConcatFn, "lists...", unknowns);
  add("contains", 2, 2, ContainsFn, "list, value");
  add("distinct", 1, 1, DistinctFn, "list");
  add("element", 2, 2, ElementFn, "list, index", unknowns);
  add("flatten", 1, 1, FlattenFn, "list");
  add("index", 2, 2, IndexFn, "list, value");
  add("keys", 1, 1, KeysFn, "map", unknowns);
  add("length", 1, 1, LengthFn, "value", unknowns);
  add("lookup", 2, 3, LookupFn, "map, key, default", {.unknown_args = true, .null_args = true});
  add("merge", 0, -1, MergeFn, "maps...", {.unknown_args = true, .null_args = true});
  add("one", 1, 1, OneFn, "list", unknowns);
  add("range", 1, 3, RangeFn, "start, limit, step");
  add("reverse", 1, 1, ReverseFn, "list", unknowns);
  add("setintersection", 1, -1, SetIntersectionFn, "sets...");
  add("setproduct", 2, -1, SetProductFn, "sets...");
  add("setsubtract", 2, 2, SetSubtractFn, "a, b");
  add("setunion", 1, -1, SetUnionFn, "sets...");
  add("slice", 3, 3, SliceFn, "list, startindex, endindex", unknowns);
  add("sort", 1, 1, SortFn, "list");
  add("transpose", 1, 1, TransposeFn, "map");
  add("values", 1, 1, ValuesFn, "map", unknowns);
  add("zipmap", 2, 2, ZipMapFn, "keyslist, valueslist", unknowns);
}

}  // namespace cairn::expr
