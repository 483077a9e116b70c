#include "engine/manifest/config.h"

namespace cairn {

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

const SourceLocation& ResourceConfig::LocationOf(const std::string& field) const {
  if (field_locations) {
    auto it = field_locations->find(field);
    if (it != field_locations->end() && it->second.has_position()) return it->second;
  }
  return name_location.has_position() ? name_location : location;
}

}  // namespace cairn
