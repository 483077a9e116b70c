// Saved plans (`cairn plan --out FILE`, `cairn apply FILE`).
//
// A plan made while the journal holds operations of an interrupted run is
// not saved: `cairn apply` completes those first, after which the plan would
// describe a state that no longer is.
#pragma once

#include <vector>

#include "base/status.h"
#include "engine/state/state_store.h"

namespace cairn {

// FailedPrecondition, the message telling the user to run `cairn apply`
// first, when `pending` (the journal) holds operations of an interrupted
// run: `cairn plan --out` checks it before planning.
Status CheckPlanCanBeSaved(const std::vector<JournalEntry>& pending);

}  // namespace cairn
