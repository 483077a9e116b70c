// Action: what is done to one resource, the one name for it across the
// engine: the plan's changes (all five), the provider's mutations and
// apply's operations (create, update and delete: a replace is a delete and a
// create, in its ReplaceOrder), and the journal's text ("create", "update",
// "delete").
#pragma once

#include <optional>
#include <string>

namespace cairn {

enum class Action { kNoOp, kCreate, kUpdate, kReplace, kDelete };

// "no-op", "create", "update", "replace", "delete".
const char* ActionName(Action a);
// The inverse of ActionName; nullopt for any other text.
std::optional<Action> ParseAction(const std::string& name);

// How a replace swaps the old object for the new one.
enum class ReplaceOrder {
  // The old object deleted first, then the new one created: the default.
  kDeleteThenCreate,
  // lifecycle.create_before_destroy: the new object created first, the old
  // one kept (deposed) until it is deleted after.
  kCreateThenDelete,
};

// Whether `a` is one of apply's operations, the actions a request carries
// out and the journal records: create, update or delete.
constexpr bool IsOperation(Action a) {
  return a == Action::kCreate || a == Action::kUpdate || a == Action::kDelete;
}

}  // namespace cairn
