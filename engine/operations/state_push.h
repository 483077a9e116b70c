// Restoring a pulled state (`cairn state push`): whether the state a file
// holds may replace the stack's, and the one commit that replaces it. Like
// Terraform's CheckValidImport, a pure check over values; the command reads
// the file, checks it whole (CheckState, engine/operations/state_check.h),
// takes the lock and commits what this returns.
//
// The rules, each lifted by `force`:
//   - operations in flight (journal entries of an interrupted apply) are
//     finished first: the pushed state would be written under them;
//   - a state of another lineage (another stack's) is not taken for this one;
//   - a state older than this one (same lineage, lower serial) is not
//     restored over what changed after it was pulled.
// A state with serial 0 has never recorded anything (new, or its file
// lost): any pulled state may fill it.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "engine/state/state_store.h"

namespace cairn {

// OK when `pushed` (what `file` holds, as ParsePulledState read it) may
// replace `current` (the stack's state, loaded under the lock, with
// `operations_in_flight` pending journal entries); FailedPrecondition,
// saying which rule refuses it and how to proceed, otherwise.
Status CheckPush(const StateSnapshot& current, size_t operations_in_flight,
                 const StateSnapshot& pushed, const std::string& file, bool force);

// The commit that makes `current` what `pushed` holds: its resources (the
// ones only `current` has removed), outputs and their sensitivity, its
// lineage; the serial past both the state's and the file's, so that every
// plan saved before is stale; the sequence counter never below either, so
// that no idempotency key is handed out twice.
StateCommit PushCommit(const StateSnapshot& current, const StateSnapshot& pushed);

}  // namespace cairn
