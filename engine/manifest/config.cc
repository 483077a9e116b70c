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

}  // namespace cairn
