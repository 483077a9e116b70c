#include "engine/value.h"

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

std::string ValueTypeNoun(const Value& v) {
  switch (v.type()) {
    case Value::value_t::string: return "a string";
    case Value::value_t::number_integer:
    case Value::value_t::number_unsigned: return "an integer";
    case Value::value_t::number_float: return "a number";
    case Value::value_t::boolean: return "a boolean";
    case Value::value_t::array: return "a list";
    case Value::value_t::object: return "a mapping";
    default: return "null";
  }
}

}  // namespace cairn
