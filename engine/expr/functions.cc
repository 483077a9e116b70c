#include "engine/expr/functions.h"

#include <charconv>
#include <cmath>

namespace cairn::expr {

void CallContext::ArgError(size_t i, const std::string& message) {
  const Node& at = i < call_.kids.size() ? *call_.kids[i] : call_;
  ev_.Error(at, "invalid_function_argument", call_.name + "(): " + message);
}

void CallContext::Error(const std::string& message, const std::string& code) {
  ev_.Error(call_, code, call_.name + "(): " + message);
}

const FunctionTable& Functions() {
  static const FunctionTable table = [] {
    FunctionTable t;
    RegisterNumericFunctions(t);
    RegisterStringFunctions(t);
    RegisterCollectionFunctions(t);
    RegisterEncodingFunctions(t);
    RegisterFileFunctions(t);
    RegisterHashFunctions(t);
    RegisterNetworkFunctions(t);
    RegisterTypeFunctions(t);
    return t;
  }();
  return table;
}

const FunctionSpec* FindFunction(std::string_view name) {
  const FunctionTable& t = Functions();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

namespace {

std::string Ordinal(size_t i) {
  static const char* names[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
  return i < 6 ? names[i] : "argument " + std::to_string(i + 1);
}

std::string Described(const Value& v) {
  if (v.is_string()) return "the string \"" + v.as_string() + "\"";
  return std::string(v.is_unknown() ? "an " : "a ") + v.type_name();
}

}  // namespace

std::optional<Number> ArgNumber(const Value& v, size_t i, CallContext& cx) {
  if (v.is_number()) return v.as_number();
  if (v.is_string()) {
    const std::string& s = v.as_string();
    int64_t n = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), n);
    if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) return Number::Int(n);
    double d = 0;
    auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
    if (!s.empty() && rd.ec == std::errc() && rd.ptr == s.data() + s.size() && std::isfinite(d))
      return Number::Real(d);
  }
  cx.ArgError(i, "the " + Ordinal(i) + " argument must be a number, not " + Described(v));
  return std::nullopt;
}

std::optional<int64_t> ArgInt(const Value& v, size_t i, CallContext& cx) {
  auto n = ArgNumber(v, i, cx);
  if (!n) return std::nullopt;
  if (!n->is_int) {
    cx.ArgError(i, "the " + Ordinal(i) + " argument must be a whole number, not " + n->ToString());
    return std::nullopt;
  }
  return n->i;
}

std::optional<std::string> ArgString(const Value& v, size_t i, CallContext& cx) {
  if (auto s = ToStringValue(v)) return s;
  cx.ArgError(i, "the " + Ordinal(i) + " argument must be a string, not " + Described(v));
  return std::nullopt;
}

std::optional<bool> ArgBool(const Value& v, size_t i, CallContext& cx) {
  if (v.is_bool()) return v.as_bool();
  if (v.is_string() && (v.as_string() == "true" || v.as_string() == "false"))
    return v.as_string() == "true";
  cx.ArgError(i, "the " + Ordinal(i) + " argument must be a bool, not " + Described(v));
  return std::nullopt;
}

const List* ArgList(const Value& v, size_t i, CallContext& cx) {
  if (v.is_sequence()) return &v.items();
  cx.ArgError(i, "the " + Ordinal(i) + " argument must be a list or set, not " + Described(v));
  return nullptr;
}

const Map* ArgMap(const Value& v, size_t i, CallContext& cx) {
  if (v.is_map()) return &v.entries();
  cx.ArgError(i, "the " + Ordinal(i) + " argument must be a map or object, not " + Described(v));
  return nullptr;
}

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Utf8Substr(std::string_view s, size_t offset, size_t count) {
  size_t i = 0, ch = 0;
  while (i < s.size() && ch < offset) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++ch;
  }
  size_t start = i;
  ch = 0;
  while (i < s.size() && ch < count) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++ch;
  }
  return std::string(s.substr(start, i - start));
}

}  // namespace cairn::expr
