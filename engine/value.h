// Values in the engine are nlohmann::json. A value that is not known until
// apply (an attribute the API computes, like an instance's id or ipv4, or
// anything derived from one) is the "unknown" marker below. It is never sent
// to the API, never written to state, and renders as "(known after apply)".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace cairn
