#include "engine/manifest/expand.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

std::optional<long long> CountOf(Value v, const SourceLocation& at,
                                 std::vector<Diagnostic>& diags) {
  if (v.is_string()) v = PlainScalar(v.get<std::string>());
  if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
      std::fabs(v.get<double>()) < 1e9) {
    v = static_cast<long long>(v.get<double>());
  }
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > kMaxCount) {
    std::string got = v.is_string()
                          ? "\"" + v.get<std::string>().substr(0, 40) + "\""
                          : v.dump(-1, ' ', false, Value::error_handler_t::replace).substr(0, 40);
    AddError(diags, "invalid_count",
             "count must be a whole number from 0 to " + std::to_string(kMaxCount) + ", not " + got,
             at);
    return std::nullopt;
  }
  return v.get<long long>();
}

// Keys in sorted order.
std::optional<std::vector<std::pair<std::string, Value>>> ForEachOf(
    const Value& v, const ExpansionLocations& at, std::vector<Diagnostic>& diags) {
  std::vector<std::pair<std::string, Value>> out;
  if (v.is_array()) {
    std::set<std::string> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        AddError(diags, "invalid_for_each",
                 "for_each list items must be strings, not " + ValueTypeNoun(v[i]),
                 at.for_each_item ? at.for_each_item(i) : at.for_each);
        return std::nullopt;
      }
      const std::string& key = v[i].get_ref<const std::string&>();
      if (!seen.insert(key).second) {
        AddError(diags, "invalid_for_each", "for_each lists \"" + key + "\" twice",
                 at.for_each_item ? at.for_each_item(i) : at.for_each);
        return std::nullopt;
      }
      out.emplace_back(key, v[i]);
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) out.emplace_back(it.key(), *it);
  } else {
    AddError(diags, "invalid_for_each",
             "for_each must be a list of strings or a mapping, not " + ValueTypeNoun(v),
             at.for_each);
    return std::nullopt;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

bool ExpandInstances(const std::string& what, const Value* count, const Value* for_each,
                     const ExpansionLocations& at, Instances& out, std::vector<Diagnostic>& diags) {
  out = Instances();
  if (count && for_each) {
    AddError(diags, "count_and_for_each", "a " + what + " takes count or for_each, not both",
             at.for_each_key);
    return false;
  }
  if (count) out.mode = Instances::Mode::kCount;
  if (for_each) out.mode = Instances::Mode::kForEach;
  if (count) {
    auto n = CountOf(*count, at.count, diags);
    if (!n) return false;
    for (long long i = 0; i < *n; ++i) out.indexes.emplace_back(static_cast<int>(i));
  } else if (for_each) {
    auto items = ForEachOf(*for_each, at, diags);
    if (!items) return false;
    for (auto& [key, value] : *items) {
      out.indexes.emplace_back(key);
      out.each_values.push_back(std::move(value));
    }
  } else {
    out.indexes.emplace_back(std::monostate{});
  }
  return true;
}

std::string DefaultApiName(const std::vector<ModuleStep>& module, const std::string& name,
                           const AddressIndex& index) {
  std::string out;
  auto add_index = [&](const AddressIndex& i) {
    if (const int* n = std::get_if<int>(&i)) out += "-" + std::to_string(*n);
    if (const auto* key = std::get_if<std::string>(&i)) out += "-" + *key;
  };
  for (const ModuleStep& step : module) {
    out += step.name;
    add_index(step.index);
    out += "-";
  }
  out += name;
  add_index(index);
  return out;
}

}  // namespace cairn
