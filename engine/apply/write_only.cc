#include "engine/apply/write_only.h"

#include <algorithm>

#include "base/digest.h"

namespace cairn {
namespace {

constexpr std::string_view kPrefix = "cairn-write-only:sha256:";

Value Sealed(const Value& v, const std::vector<Value>& values) {
  if (std::find(values.begin(), values.end(), v) != values.end()) return WriteOnlyPlaceholder(v);
  if (!v.is_structured()) return v;
  Value out = v;
  if (v.is_object()) {
    for (auto& [key, member] : out.items()) member = Sealed(member, values);
  } else {
    for (auto& item : out) item = Sealed(item, values);
  }
  return out;
}

Value Unsealed(const Value& v, const std::map<std::string, Value>& known,
               std::vector<std::string>& missing) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!s.starts_with(kPrefix)) return v;
    if (auto it = known.find(s); it != known.end()) return it->second;
    missing.push_back(s);
    return v;
  }
  if (!v.is_structured()) return v;
  Value out = v;
  if (v.is_object()) {
    for (auto& [key, member] : out.items()) member = Unsealed(member, known, missing);
  } else {
    for (auto& item : out) item = Unsealed(item, known, missing);
  }
  return out;
}

}  // namespace

std::string WriteOnlyPlaceholder(const Value& v) {
  return std::string(kPrefix) + Sha256Hex(v.dump(-1, ' ', false, Value::error_handler_t::replace));
}

std::string SealWriteOnly(const std::string& body, const std::vector<Value>& values) {
  Value parsed = Value::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || values.empty()) return body;
  return Sealed(parsed, values).dump(-1, ' ', false, Value::error_handler_t::replace);
}

bool HoldsWriteOnlyPlaceholder(const std::string& body) {
  return body.find(kPrefix) != std::string::npos;
}

std::string UnsealWriteOnly(const std::string& body, const std::map<std::string, Value>& known,
                            std::vector<std::string>& missing) {
  Value parsed = Value::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return body;
  return Unsealed(parsed, known, missing).dump(-1, ' ', false, Value::error_handler_t::replace);
}

}  // namespace cairn
