#include "engine/manifest/config.h"

#include <variant>

namespace cairn {

namespace {

void CollectStrings(const Value& v, std::vector<std::string>& out) {
  if (v.is_string()) {
    if (!v.get_ref<const std::string&>().empty()) out.push_back(v.get<std::string>());
  } else if (v.is_structured()) {
    for (const auto& item : v) CollectStrings(item, out);
  }
}

}  // namespace

std::vector<std::string> SensitiveStrings(const std::map<std::string, Value>& variables,
                                          const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (auto it = variables.find(name); it != variables.end()) CollectStrings(it->second, out);
  }
  return out;
}

std::vector<std::string> StackConfig::SensitiveStrings() const {
  return cairn::SensitiveStrings(variables, sensitive_variables);
}

namespace {

// "module.a[0].module.b" for that path.
std::string ModulePathText(const std::vector<ModuleStep>& path) {
  std::string prefix = ModulePathPrefix(path);
  return prefix.empty() ? prefix : prefix.substr(0, prefix.size() - 1);  // without its last '.'
}

}  // namespace

std::string MovedConfig::FromText() const {
  return IsModuleMove() ? ModulePathText(from_module) : from.ToString();
}

std::string MovedConfig::ToText() const {
  return IsModuleMove() ? ModulePathText(to_module) : to.ToString();
}

std::string RemovedConfig::FromText() const {
  return resource ? resource->ToString() : ModulePathText(module);
}

bool RemovedConfig::Matches(const ResourceAddress& address) const {
  if (!resource) return !module.empty() && InModule(address.module, module);
  if (address.module != resource->module || address.kind != resource->kind ||
      address.name != resource->name) {
    return false;
  }
  return std::holds_alternative<std::monostate>(resource->index) ||
         address.index == resource->index;
}

const ResourceConfig* StackConfig::Find(const ResourceAddress& addr) const {
  if (!resource_index.empty()) {
    auto it = resource_index.find(addr.ToString());
    if (it != resource_index.end() && it->second < resources.size() &&
        resources[it->second].address == addr) {
      return &resources[it->second];
    }
  }
  for (const auto& r : resources) {
    if (r.address == addr) return &r;
  }
  return nullptr;
}

std::optional<SourceLocation> FieldLocations::Find(std::string_view field) const {
  for (auto it = fields.rbegin(); it != fields.rend(); ++it) {  // a key written twice: the last
    const Field& f = *it;
    if (f.name != field) continue;
    if (f.line <= 0) return std::nullopt;
    return SourceLocation{file, f.line, f.column, f.length};
  }
  return std::nullopt;
}

SourceLocation ResourceConfig::LocationOf(std::string_view field) const {
  if (field_locations) {
    if (auto at = field_locations->Find(field)) return std::move(*at);
  }
  return name_location.has_position() ? name_location : location;
}

}  // namespace cairn
