#include "engine/action.h"

namespace cairn {
namespace {

constexpr const char* kActionNames[] = {"no-op", "create", "update", "replace", "delete"};

}  // namespace

const char* ActionName(Action a) { return kActionNames[static_cast<int>(a)]; }

std::optional<Action> ParseAction(const std::string& name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kActionNames[i]) return static_cast<Action>(i);
  }
  return std::nullopt;
}

}  // namespace cairn
