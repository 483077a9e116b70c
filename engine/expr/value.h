// expr::Value: a value of the expression language, as Terraform's (cty)
// values are: null, bool, number, string, list, set, map, or unknown ("known
// after apply"), each carrying its marks. The engine's other values are JSON
// (base/value.h); FromJson and ToJson cross between the two at the edges of
// an evaluation.
//
// - Numbers are exact 64-bit integers while they can be, and doubles
//   otherwise; arithmetic that would overflow an integer fails (eval.h) rather
//   than losing digits silently.
// - Lists keep their order. Sets are lists kept sorted by Compare() without
//   repeats. Maps (HCL's objects and maps alike) are ordered by key, as
//   Terraform iterates them.
// - Unknown stands for a value known only after apply. It has no type: any
//   operation on it is unknown, except where the result is known anyway (a
//   conditional whose condition is known, length() of a list of unknowns).
// - The sensitive mark follows a value through every operation: an operation
//   with a sensitive operand gives a sensitive result. It names where the
//   sensitivity came from ("var.password"), so that a diagnostic can say.
//   A mark sits on the value that carries it; a list may hold a sensitive
//   element without being sensitive itself (DeepSensitive looks inside).
//
// Values are immutable once built and cheap to copy: lists and maps share
// their elements.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/value.h"

namespace cairn::expr {

// An ephemeral value (an ephemeral variable of a stack, and everything
// computed from it) is sensitive, with one more origin in its mark:
// "ephemeral:var.NAME". nonsensitive() keeps that origin, so an ephemeral
// value is never shown and never loses what it is.
inline constexpr std::string_view kEphemeralOrigin = "ephemeral:";
inline bool IsEphemeralOrigin(std::string_view from) { return from.starts_with(kEphemeralOrigin); }

class Value;
using List = std::vector<Value>;
using Map = std::map<std::string, Value, std::less<>>;

// An integer when `is_int` (then `i` is the value), else the double `d`.
struct Number {
  bool is_int = true;
  int64_t i = 0;
  double d = 0;

  static Number Int(int64_t v) { return {true, v, 0}; }
  // A double; one that is a whole number within int64's range becomes an
  // integer, so that 4/2 is 2 and prints as "2".
  static Number Real(double v);
  double AsDouble() const { return is_int ? static_cast<double>(i) : d; }
  // Terraform's number formatting: integers in full, others in the
  // shortest decimal that reads back exactly, never with an exponent
  // ("2.5", "0.1", "1000000000000000000000").
  std::string ToString() const;
};

enum class Type : uint8_t { kNull, kBool, kNumber, kString, kList, kSet, kMap, kUnknown };

class Value {
 public:
  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Unknown();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Num(Number n);
  static Value Real(double d) { return Num(Number::Real(d)); }
  static Value String(std::string s);
  static Value MakeList(List items);
  // Sorted and without repeats (Compare() == 0) whatever the order given.
  static Value MakeSet(List items);
  static Value MakeMap(Map items);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_unknown() const { return type_ == Type::kUnknown; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_list() const { return type_ == Type::kList; }
  bool is_set() const { return type_ == Type::kSet; }
  bool is_map() const { return type_ == Type::kMap; }
  // A list or a set: what for, splat and most collection functions take.
  bool is_sequence() const { return type_ == Type::kList || type_ == Type::kSet; }
  bool is_collection() const { return is_sequence() || is_map(); }

  bool as_bool() const { return bool_; }
  const Number& as_number() const { return num_; }
  const std::string& as_string() const { return str_; }
  // The elements of a list or set (empty for any other type).
  const List& items() const;
  // The entries of a map (empty for any other type).
  const Map& entries() const;
  // Elements of a list or set, entries of a map; 0 for anything else.
  size_t size() const;

  // True when this value or anything inside it is unknown.
  bool ContainsUnknown() const;
  // True when this value is known all the way down.
  bool WhollyKnown() const { return !ContainsUnknown(); }

  // ---- marks ----
  bool sensitive() const { return marks_ != nullptr; }
  // Where the sensitivity came from, in the order first met ("var.pw").
  const std::vector<std::string>& sensitive_from() const;
  // This value, marked sensitive because of `from` (added to any origins it
  // has already).
  Value MarkedSensitive(const std::string& from) const;
  // The marks of `other` added to this value's.
  Value WithMarksOf(const Value& other) const;
  // This value without its own mark (nonsensitive()); nested marks stay.
  Value Unmarked() const;
  // This value, and everything nested in it, without marks.
  Value DeepUnmarked() const;
  // True when this value or anything nested in it is sensitive; `from`
  // (when given) collects where from.
  bool DeepSensitive(std::vector<std::string>* from = nullptr) const;

  // ---- JSON (base/value.h) ----
  // JSON to a value: the unknown marker becomes Unknown; integers that fit
  // int64 are integers. Unmarked.
  static Value FromJson(const cairn::Value& j);
  // A value as JSON, marks dropped: unknown as the unknown marker, sets as
  // arrays, maps as objects.
  cairn::Value ToJson() const;

  // "string", "number", "bool", "list", "set", "map", "null", "unknown":
  // how diagnostics name a type.
  static const char* TypeName(Type t);
  const char* type_name() const { return TypeName(type_); }

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  Number num_;
  std::string str_;
  std::shared_ptr<const List> list_;
  std::shared_ptr<const Map> map_;
  // Null when not sensitive; otherwise the origins (never empty).
  std::shared_ptr<const std::vector<std::string>> marks_;
};

// A total order over values (marks ignored), for sets and sort(): by type
// (null < bool < number < string < list < set < map < unknown), then by
// value; numbers numerically, strings bytewise, collections element by
// element.
int Compare(const Value& a, const Value& b);

// Terraform's `==`: the same type and the same value, marks ignored; a
// number equals a number of the same value whether integer or not. Neither
// side may be unknown (the evaluator checks that first).
bool Equal(const Value& a, const Value& b);

// The value as text where a string is wanted (Terraform's conversion to
// string): a string as it is, a number in Number::ToString's form, a bool as
// "true" or "false". Empty optional for null, collections and unknown, which
// do not convert.
std::optional<std::string> ToStringValue(const Value& v);

// The value as HCL source that evaluates to it again: strings quoted with
// escapes (and "${" written "$${"), maps as `{"k" = v}`. Unknown prints as
// `(known after apply)`, which does not parse; a sensitive value prints as
// sensitive(...) around it, so that its mark survives printing and parsing.
std::string ToSource(const Value& v);

// How `cairn console` and plans show a value: as ToSource, but unknown as
// "(known after apply)" and a sensitive value as "(sensitive value)".
std::string Display(const Value& v);

}  // namespace cairn::expr
