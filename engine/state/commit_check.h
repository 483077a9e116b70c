// The checks every StateStore makes on a StateCommit before touching
// anything, so that a malformed commit is refused whole rather than half
// applied. What depends on the stored state (a move whose source is missing,
// a journal entry that is not pending) is checked by each backend inside its
// transaction.
//
// What every store does with a valid commit, in one transaction, all or
// nothing: moves in order (NotFound when the source is missing,
// AlreadyExists when the target exists), then puts (insert or replace), then
// removes (a missing address is no error), then clears journal_done (NotFound
// when that entry is not pending: a double completion is a bug), then
// replaces all outputs when given, then serial + 1 (with a restore: the
// lineage replaced, serial max(serial + 1, min_serial), sequence counter
// max(itself, min_sequence)), the serial returned.
// The lock: Unlock(id) is NotFound when unlocked and Conflict when another id
// holds it; ForceUnlock(id) is NotFound unless `id` holds it. Stores do not
// check that the caller holds the lock before a write: that is the caller's
// protocol (Lock, then write, then Unlock).
//
// Invariants of a valid commit:
//   - every put has a non-empty address and kind, and no attribute (nested
//     or not) is the unknown marker: unknown values never reach state;
//   - no address is both put and removed;
//   - every move has distinct, non-empty ends, and no two moves share a source
//     or a target;
//   - no output value is unknown;
//   - a restore has a lineage and no negative number.
#pragma once

#include "base/status.h"
#include "engine/state/state_store.h"

namespace cairn {

Status CheckCommit(const StateCommit& commit);

// CheckCommit's rules for journal entries: each has seq > 0, an address and
// an operation (create, update or delete) for its action; no two share a
// sequence number (AlreadyExists).
Status CheckJournalEntries(std::span<const JournalEntry> entries);

// The action of the stored journal entry `seq`, from its text (ActionName's):
// FailedPrecondition, naming `store` ("state database"), for text that is
// not an operation's (a damaged state).
Result<Action> ParseJournalAction(const std::string& text, int64_t seq, const std::string& store);

// ReserveSequences' argument: at least 1.
Status CheckSequenceCount(int64_t count);

}  // namespace cairn
