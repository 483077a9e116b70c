// Values in the engine are nlohmann::json. A value that is not known until
// apply (an attribute the API computes, like an instance's id or ipv4, or
// anything derived from one) is the "unknown" marker below. It is never sent
// to the API, never written to state, and renders as "(known after apply)".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

using Value = nlohmann::json;

inline constexpr const char* kUnknownMarkerKey = "$cairn_unknown";

// {"$cairn_unknown": true}
Value UnknownValue();
bool IsUnknown(const Value& v);
// True when `v` or anything nested in it is unknown.
bool ContainsUnknown(const Value& v);

// The type of `v` as diagnostics name it: "a string", "an integer",
// "a number", "a boolean", "a list", "a mapping" or "null".
std::string ValueTypeNoun(const Value& v);

// The string member `key` of mapping `v`; "" when `v` is not a mapping or
// the member is missing or not a string. Never throws, unlike
// Value::value(key, ""): for values read from outside (a journaled request
// body, an API's answer), which may hold anything.
std::string StringMember(const Value& v, std::string_view key);

// The deepest nesting of lists and mappings Cairn accepts in JSON it reads (a
// request body, a saved plan, a state row, an API response) and in manifests.
// Every walk over a value (dumping, canonical forms, secret scans, unknown
// checks) recurses, so input deeper than this is refused while it is parsed,
// which does not recurse: a hostile document costs memory, never the stack.
inline constexpr int kMaxValueDepth = 64;

// `text` parsed as exactly one JSON value. InvalidArgument when it is not
// JSON, when anything but whitespace follows the value (a NUL byte included:
// nlohmann's lexer would take it for the end of input), or when lists and
// mappings nest deeper than `max_depth`; no partial value is built.
// A list or mapping that opens `keep_depth` or more levels deep (the value
// itself is at level 0, its members at 1) is checked as the rest, but left
// out of the result: ParseJson(text, kMaxValueDepth, 2) gives an object's
// members with only their scalars, at a fraction of the whole's memory.
Result<Value> ParseJson(std::string_view text, int max_depth = kMaxValueDepth,
                        int keep_depth = kMaxValueDepth);

}  // namespace cairn
