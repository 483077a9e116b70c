#include "engine/operations/saved_plan.h"

#include <string>

namespace cairn {

Status CheckPlanCanBeSaved(const std::vector<JournalEntry>& pending) {
  if (pending.empty()) return Status::Ok();
  return Status::FailedPrecondition(
      "not saving the plan: " + std::to_string(pending.size()) +
      " operation(s) of an interrupted apply are unfinished, and 'cairn apply' completes them "
      "before anything else, after which this plan would be of a state that no longer is. Run "
      "'cairn apply' first (it finishes them, then shows its own plan), then plan again");
}

}  // namespace cairn
