// Action: what is done to one resource, the one name for it across the
// engine: the plan's changes (all five), the provider's mutations and
// apply's operations (create, update and delete: a replace is a delete and a
// create), and the journal's text ("create", "update", "delete").
#pragma once

#include <optional>
#include <string>

namespace cairn {

enum class Action { kNoOp, kCreate, kUpdate, kReplace, kDelete };

// "no-op", "create", "update", "replace", "delete".
const char* ActionName(Action a);
// The inverse of ActionName; nullopt for any other text.
std::optional<Action> ParseAction(const std::string& name);

}  // namespace cairn
