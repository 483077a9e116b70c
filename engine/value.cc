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

}  // namespace cairn
