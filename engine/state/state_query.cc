#include "engine/state/state_query.h"

#include <algorithm>
#include <variant>

#include "engine/address.h"

namespace cairn {

std::vector<std::string> StateAddressesNamed(const StateSnapshot& state, std::string_view text) {
  auto parsed = ResourceAddress::Parse(text);
  const std::string key = parsed ? parsed->ToString() : std::string(text);
  if (state.resources.count(key)) return {key};
  std::vector<std::string> out;
  if (!parsed || !std::holds_alternative<std::monostate>(parsed->index)) return out;
  for (const auto& [address, rs] : state.resources) {
    auto recorded = StateKey::Parse(address);
    if (recorded && recorded->resource.BaseString() == key) out.push_back(address);
  }
  std::sort(out.begin(), out.end(), AddressTextLess);
  return out;
}

}  // namespace cairn
