#include "engine/manifest/config.h"

namespace cairn {

const ResourceConfig* StackConfig::Find(const ResourceAddress& addr) const {
  for (const auto& r : resources) {
    if (r.address == addr) return &r;
  }
  return nullptr;
}

}  // namespace cairn
