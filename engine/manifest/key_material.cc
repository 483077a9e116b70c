#include "engine/manifest/key_material.h"

#include <algorithm>

#include "base/private_key.h"
#include "engine/manifest/locate.h"

namespace cairn {

std::vector<YamlNode> ScalarsHoldingKeys(const YamlTree& tree) {
  std::vector<YamlNode> out;
  for (const YamlNode& s : tree.Scalars()) {
    if (FindPrivateKey(s.Scalar()).found()) out.push_back(s);
  }
  return out;
}

bool MayHoldKey(const Value& v) {
  if (v.is_string())
    return v.get_ref<const std::string&>().find("PRIVATE KEY-----") != std::string::npos;
  if (v.is_structured()) return std::any_of(v.begin(), v.end(), MayHoldKey);
  return false;
}

void KeyPointers(const Value& v, const std::string& pointer, std::vector<std::string>& out) {
  if (v.is_string()) {
    if (FindPrivateKey(v.get_ref<const std::string&>()).found()) out.push_back(pointer);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) KeyPointers(v[i], pointer + "/" + std::to_string(i), out);
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      KeyPointers(*it, pointer + "/" + PointerToken(it.key()), out);
    }
  }
}

}  // namespace cairn
