// Which recorded addresses an address given by a user names, for the
// commands that look at or edit the state by address (`cairn state show`,
// `cairn state rm`): the address itself when the state records it;
// otherwise, for a resource address without an index, every instance of
// that resource the state records (a count or for_each resource) and the
// objects its replacements left deposed. Canonical text first
// ("instance.web[00]" is "instance.web[0]").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/state/state_store.h"

namespace cairn {

// In address order; empty when `text` names nothing in `state`.
std::vector<std::string> StateAddressesNamed(const StateSnapshot& state, std::string_view text);

}  // namespace cairn
