#include "base/value.h"

#include <simdjson.h>

#include <algorithm>

namespace cairn {

Value UnknownValue() { return Value{{kUnknownMarkerKey, true}}; }

bool IsUnknown(const Value& v) {
  return v.is_object() && v.size() == 1 && v.contains(kUnknownMarkerKey);
}

bool ContainsUnknown(const Value& v) {
  if (IsUnknown(v)) return true;
  if (v.is_structured()) {
    for (const auto& item : v) {
      if (ContainsUnknown(item)) return true;
    }
  }
  return false;
}

namespace {

// How deep the lists and mappings of `text` nest, the brackets inside
// strings not counted. Exact for JSON; for text that is not, never less
// than the depth a parser reaches before the first error, where it stops
// (up to that point the text is JSON, and counted as such).
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote perhaps
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Texts up to this size are parsed by simdjson (below); a larger one (a
// saved plan of 100,000 changes is 132 MB) by nlohmann's parser, which
// builds the value without simdjson's own copy of the whole document.
constexpr size_t kSimdjsonMaxBytes = size_t{1} << 20;

// simdjson's DOM of a text as the Value nlohmann's parser makes of it: the
// same types (a non-negative integer unsigned, a negative one signed), the
// last of a key written twice. One difference, which no comparison or
// output shows: an integer written -0 is an unsigned 0 here (simdjson reads
// it as 0), a signed one in nlohmann's. Recursion is bounded: only text
// that NestingDepth found shallow comes here.
void FromDom(simdjson::dom::element e, Value& out) {
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
    case Type::ARRAY: {
      out = Value::array();
      auto& items = out.get_ref<Value::array_t&>();
      simdjson::dom::array array = e.get_array().value_unsafe();
      items.reserve(array.size());
      for (simdjson::dom::element item : array) FromDom(item, items.emplace_back());
      return;
    }
    case Type::OBJECT: {
      out = Value::object();
      auto& members = out.get_ref<Value::object_t&>();
      simdjson::dom::object object = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair member : object) {
        // At the end, where the next key of a sorted object goes; an
        // existing key's element is returned, and its value replaced.
        auto it = members.emplace_hint(members.end(), member.key, Value());
        FromDom(member.value, it->second);
      }
      return;
    }
    case Type::INT64: {
      const int64_t i = e.get_int64().value_unsafe();
      if (i >= 0) {
        out = static_cast<uint64_t>(i);
      } else {
        out = i;
      }
      return;
    }
    case Type::UINT64:
      out = e.get_uint64().value_unsafe();
      return;
    case Type::DOUBLE:
      out = e.get_double().value_unsafe();
      return;
    case Type::STRING:
      out = std::string(e.get_string().value_unsafe());
      return;
    case Type::BOOL:
      out = e.get_bool().value_unsafe();
      return;
    case Type::NULL_VALUE:
      out = nullptr;
      return;
  }
}

// `text` parsed by simdjson into `out`; false when simdjson refuses it,
// leaving the text to nlohmann, which then says what it is (simdjson also
// refuses what nlohmann reads: an integer past 64 bits, which nlohmann
// makes a float, and a byte order mark before the value). Twice as fast as
// nlohmann's parser on a page of a listing (0.4 against 0.8 ms for 200
// instances).
bool ParseWithSimdjson(std::string_view text, Value& out) {
  if (text.size() > kSimdjsonMaxBytes) return false;
  // One parser per thread, kept: its buffers are made for the largest
  // text it has read (at most kSimdjsonMaxBytes), not again for each one.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root)) return false;
  FromDom(root, out);
  return true;
}

}  // namespace

Result<Value> ParseJson(std::string_view text, int max_depth, int keep_depth) {
  // A raw NUL is never valid JSON (inside strings it must be escaped), and
  // the lexer would stop at it as if the input ended there.
  if (text.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("invalid JSON: a NUL byte");
  // Nothing too deep to keep or to accept (nearly always): the plain
  // parser, which builds the value without a call per token: a quarter
  // less time than the one with a callback below, on a page of a listing
  // (1.5 against 2.0 ms for 200 instances, 110 KB).
  const int depth = NestingDepth(text);
  if (depth <= max_depth && depth <= keep_depth) {
    if (Value v; ParseWithSimdjson(text, v)) return v;
    Value v = Value::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) return Status::InvalidArgument("invalid JSON");
    return v;
  }
  bool too_deep = false;
  // The callback's depth is that of the enclosing container (0 at the top),
  // so an opening bracket at depth d starts nesting level d + 1. Refusing it
  // keeps nothing below it: the parser itself is iterative. The callback
  // is still called for what is below (so depth is checked there too).
  Value::parser_callback_t bound = [&](int depth, Value::parse_event_t event, Value&) {
    if (event != Value::parse_event_t::object_start && event != Value::parse_event_t::array_start) {
      return true;
    }
    if (depth >= max_depth) {
      too_deep = true;
      return false;
    }
    return depth < keep_depth;
  };
  Value v = Value::parse(text.begin(), text.end(), bound, /*allow_exceptions=*/false);
  if (too_deep) {
    return Status::InvalidArgument("JSON nests deeper than " + std::to_string(max_depth) +
                                   " levels");
  }
  if (v.is_discarded()) return Status::InvalidArgument("invalid JSON");
  return v;
}

std::string ValueTypeNoun(const Value& v) {
  switch (v.type()) {
    case Value::value_t::string:
      return "a string";
    case Value::value_t::number_integer:
    case Value::value_t::number_unsigned:
      return "an integer";
    case Value::value_t::number_float:
      return "a number";
    case Value::value_t::boolean:
      return "a boolean";
    case Value::value_t::array:
      return "a list";
    case Value::value_t::object:
      return "a mapping";
    default:
      return "null";
  }
}

std::string StringMember(const Value& v, std::string_view key) {
  if (!v.is_object()) return "";
  auto it = v.find(key);
  return it != v.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace cairn
