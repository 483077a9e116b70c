// ApplyGraph: the operations of one apply run and the order they must
// keep, built before anything runs. Two ways to build it, and no mode
// beyond that:
//
//   FromPlan     the plan's changes only (apply never touches what the plan
//                did not show): a create, update or delete per change, a
//                replace as a delete and a create in its ReplaceOrder
//                (create then delete: the delete is of the deposed old
//                object). Creates and updates come after the creates and
//                updates of what they depend on; a delete after whatever
//                used the old object has let go of it. Proven acyclic.
//   FromJournal  an interrupted run's pending journal entries, each an
//                operation already journaled (`journaled`), independent of
//                the others: an operation is journaled only once what it
//                depends on is recorded, and a journal write syncs the
//                commits before it.
//
// Node i's edges are `successors` (indices); `predecessors` counts the
// edges into it. A pure value: no I/O, no threads.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/plan/plan.h"
#include "engine/state/state_store.h"

namespace cairn {

struct ApplyNode {
  const PlannedChange* change = nullptr;
  Action op = Action::kCreate;  // kCreate, kUpdate or kDelete (IsOperation)
  // The delete of the old object a create-then-delete replace deposed.
  bool deposed = false;
  std::vector<size_t> successors;
  int predecessors = 0;
  // FromJournal: the interrupted run's entry, to send again as it is (its
  // key and body); the operation is completed rather than started.
  std::optional<JournalEntry> journaled;
};

struct ApplyGraph {
  std::vector<ApplyNode> nodes;
  // False only if the plan's changes order each other in a cycle, which a
  // valid plan never does (an internal error).
  bool acyclic = true;

  // `plan` outlives the graph (the nodes point into plan.changes).
  static ApplyGraph FromPlan(const Plan& plan);
  // `changes[i]` describes `entries[i]` (RecoverJournal makes them from
  // the entries and the state) and outlives the graph.
  static ApplyGraph FromJournal(std::span<const PlannedChange> changes,
                                std::vector<JournalEntry> entries);
};

// The state key of the object a create-then-delete replace of `change`
// deposes (a deposed node's journal address and state record).
std::string DeposedKey(const PlannedChange& change);

}  // namespace cairn
