// The checks every StateStore makes on a StateCommit before touching
// anything, so that a malformed commit is refused whole rather than half
// applied. What depends on the stored state (a move whose source is missing,
// a journal entry that is not pending) is checked by each backend inside its
// transaction.
//
// Invariants of a valid commit:
//   - every put has a non-empty address and kind, and no attribute (nested
//     or not) is the unknown marker: unknown values never reach state;
//   - no address is both put and removed;
//   - every move has distinct, non-empty ends, and no two moves share a source
//     or a target;
//   - no output value is unknown.
#pragma once

#include "engine/state/state_store.h"
#include "engine/status.h"

namespace cairn {

Status CheckCommit(const StateCommit& commit);

// CheckCommit's rules for one journal entry: seq > 0, address and action set.
Status CheckJournalEntry(const JournalEntry& entry);

}  // namespace cairn
