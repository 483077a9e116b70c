// The functions of the expression language: Terraform's, with its names,
// arguments and results (docs/manifests.md, "Functions", documents each with
// an example). Nothing non-deterministic: no timestamp(), uuid() or
// bcrypt(), so that a plan made twice from the same inputs is the same.
//
// A function is a FunctionSpec in one table (FindFunction). The evaluator
// does what is common to all of them before calling one:
// - the number of arguments (min_args..max_args; -1: any number more);
// - unknown arguments: unless the function handles them (`unknown_args`),
//   any argument containing an unknown value makes the result unknown;
// - null arguments: refused ("argument N must not be null") unless
//   `null_args`;
// - marks: every argument is passed without its marks, deep, and the result
//   is marked with all of them, as Terraform does, unless the function
//   handles marks itself (`marks`: sensitive(), nonsensitive(), can(),
//   try()).
// The implementation reports problems through the CallContext, whose
// ArgError puts the caret under the argument at fault, and returns any
// value after one (it is ignored).
//
// The files are split by family: functions_numeric.cc, _string.cc,
// _collection.cc, _encoding.cc, _file.cc, _hash.cc, _network.cc, _type.cc;
// each registers its own with RegisterXFunctions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/expr/eval.h"

namespace cairn::expr {

class CallContext {
 public:
  CallContext(Evaluator& ev, const Node& call) : ev_(ev), call_(call) {}

  // Reports a problem with argument `i` (0-based) of the call: the caret
  // goes under that argument. Code "invalid_function_argument".
  void ArgError(size_t i, const std::string& message);
  // Reports a problem with the call as a whole. Code as given, default
  // "invalid_function_argument".
  void Error(const std::string& message, const std::string& code = "invalid_function_argument");
  const Node& call() const { return call_; }
  Evaluator& evaluator() { return ev_; }
  Scope& scope() { return ev_.scope(); }
  const std::string& name() const { return call_.name; }

 private:
  Evaluator& ev_;
  const Node& call_;
};

using FunctionImpl = std::function<Value(const std::vector<Value>& args, CallContext& cx)>;

struct FunctionSpec {
  int min_args = 0;
  int max_args = 0;  // -1: no upper bound
  FunctionImpl impl;
  bool unknown_args = false;  // the function is called with unknown arguments
  bool null_args = false;     // the function is called with null arguments
  bool marks = false;         // the function is given marked arguments, and marks its result
  // The arguments as the documentation names them ("list, index"): used in
  // the message for a wrong number of arguments.
  std::string signature;
};

using FunctionTable = std::map<std::string, FunctionSpec, std::less<>>;

// Every function, by name. Built once; thread-safe to read.
const FunctionTable& Functions();
// The function called `name`, or null.
const FunctionSpec* FindFunction(std::string_view name);

// Each family's registration (functions_<family>.cc).
void RegisterNumericFunctions(FunctionTable& t);
void RegisterStringFunctions(FunctionTable& t);
void RegisterCollectionFunctions(FunctionTable& t);
void RegisterEncodingFunctions(FunctionTable& t);
void RegisterFileFunctions(FunctionTable& t);
void RegisterHashFunctions(FunctionTable& t);
void RegisterNetworkFunctions(FunctionTable& t);
void RegisterTypeFunctions(FunctionTable& t);

// Conversions the functions share, each reporting through `cx` at argument
// `i` and returning nullopt when the value does not convert (Terraform's
// automatic conversions: a number from a string that holds one, a string
// from a number or bool, a bool from "true" or "false").
std::optional<Number> ArgNumber(const Value& v, size_t i, CallContext& cx);
std::optional<int64_t> ArgInt(const Value& v, size_t i, CallContext& cx);  // whole numbers only
std::optional<std::string> ArgString(const Value& v, size_t i, CallContext& cx);
std::optional<bool> ArgBool(const Value& v, size_t i, CallContext& cx);
// A list or set's elements (a set's in its order); nullopt for other types.
const List* ArgList(const Value& v, size_t i, CallContext& cx);
// A map's entries; nullopt for other types.
const Map* ArgMap(const Value& v, size_t i, CallContext& cx);

// The number of characters (code points) of UTF-8 text, and the first
// `count` of them from character `offset` (functions.cc).
size_t Utf8Length(std::string_view s);
std::string Utf8Substr(std::string_view s, size_t offset, size_t count);

// The code point of the UTF-8 sequence at s[i], advancing `i` past it; a
// byte that starts no valid sequence reads as kUtf8Invalid and advances by
// one (functions_string.cc).
inline constexpr char32_t kUtf8Invalid = 0xFFFFFFFF;
char32_t Utf8Next(std::string_view s, size_t& i);
void Utf8Append(std::string& out, char32_t c);
// True when `s` is valid UTF-8 (no overlong forms, no surrogates).
bool Utf8Valid(std::string_view s);

// Terraform's JSON text of a value (jsonencode, format's %#v and %q): no
// spaces, sets as arrays, maps as objects with sorted keys, numbers in
// full without an exponent, and <, >, &, U+2028 and U+2029 escaped as
// \u003c and so on (functions_encoding.cc). `v` must be wholly known.
std::string JsonEncode(const Value& v);
// `s` as a JSON string literal, quotes included, escaped as above.
std::string JsonQuote(std::string_view s);

}  // namespace cairn::expr
