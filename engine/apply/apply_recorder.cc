#include "engine/apply/apply_recorder.h"

#include <utility>

#include "engine/apply/apply_graph.h"
#include "engine/crash_point.h"

namespace cairn {
namespace {

// Why a resource whose wait saw it fail must be replaced, for the state
// ("" when it did not fail: a wait that timed out leaves a resource that may
// still become ready).
std::string RecorderTaintOf(bool create, const WaitResponse& wait) {
  if (wait.failed_reason.empty()) return "";
  return (create ? "provisioning failed: " : "failed after an update: ") + wait.failed_reason;
}

}  // namespace

StateCommit ResultCommit(const PlannedChange& c, Action op, int64_t seq, RemoteResource remote,
                         const WaitResponse& wait, Durability durability) {
  StateCommit commit;
  commit.journal_done = seq;
  ResourceState rs;
  rs.address = c.address;
  rs.kind = c.kind;
  rs.id = remote.id;
  rs.attributes = std::move(remote.attributes);
  rs.attributes["id"] = rs.id;
  rs.depends_on = c.depends_on;
  rs.tainted = RecorderTaintOf(op == Action::kCreate, wait);
  commit.put.push_back(std::move(rs));  // commit.put[0]
  if (c.CreatesBeforeDeleting()) {
    // The old object stays recorded, as deposed, until its delete commits.
    ResourceState old;
    old.address = DeposedKey(c);
    old.kind = c.kind;
    old.id = c.remote_id;
    old.attributes = c.before;
    old.depends_on = c.prior_depends_on;
    commit.put.push_back(old);
  }
  commit.durability = durability;
  return commit;
}

StateCommit DeleteCommit(const PlannedChange& c, bool deposed, int64_t seq) {
  StateCommit commit;
  commit.journal_done = seq;
  if (deposed) {
    commit.remove.push_back(DeposedKey(c));
  } else if (c.action == Action::kDelete || c.action == Action::kReplace) {
    commit.remove.push_back(c.address);
  }
  return commit;
}

Result<int64_t> RecordCommit(StateStore& store, const StateCommit& commit, bool recovered) {
  auto serial = store.Commit(commit);
  if (serial.ok()) CrashPoint(recovered ? "recover.committed" : "apply.committed");
  return serial;
}

bool RecordQueue::HandOff(size_t node, Durability durability) {
  if (durability != Durability::kDeferred || queue_.size() >= capacity_) return false;
  ++recording_;
  queue_.push_back(node);
  return true;
}

size_t RecordQueue::TakeNext() {
  size_t node = queue_.front();
  queue_.pop_front();
  return node;
}

}  // namespace cairn
