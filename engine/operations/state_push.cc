#include "engine/operations/state_push.h"

namespace cairn {

Status CheckPush(const StateSnapshot& current, size_t operations_in_flight,
                 const StateSnapshot& pushed, const std::string& file, bool force) {
  if (force) return Status::Ok();
  if (operations_in_flight > 0) {
    return Status::FailedPrecondition(
        "the state has " + std::to_string(operations_in_flight) +
        " operation(s) in flight, left by an interrupted apply or destroy; run 'cairn apply' to "
        "finish them first (or pass --force: the next apply finishes them over the pushed "
        "state)");
  }
  // Serial 0: nothing was ever recorded here (a new or lost state file), so
  // there is nothing the file could wrongly replace.
  if (current.serial == 0) return Status::Ok();
  if (current.lineage != pushed.lineage) {
    return Status::FailedPrecondition(file + " was pulled from another state (lineage " +
                                      pushed.lineage + "; this stack's state is " +
                                      current.lineage +
                                      "); pass --force to replace this state with it");
  }
  if (current.serial > pushed.serial) {
    return Status::FailedPrecondition(
        "the state (serial " + std::to_string(current.serial) + ") is newer than " + file +
        " (serial " + std::to_string(pushed.serial) +
        "): it changed after the file was pulled; pass --force to go back to the file anyway");
  }
  return Status::Ok();
}

StateCommit PushCommit(const StateSnapshot& current, const StateSnapshot& pushed) {
  StateCommit commit;
  for (const auto& [address, rs] : pushed.resources) commit.put.push_back(rs);
  for (const auto& [address, rs] : current.resources) {
    if (!pushed.resources.count(address)) commit.remove.push_back(address);
  }
  commit.outputs = pushed.outputs;
  commit.sensitive_outputs = pushed.sensitive_outputs;
  commit.restore = StateRestore{pushed.lineage, pushed.serial + 1, pushed.sequence};
  return commit;
}

}  // namespace cairn
