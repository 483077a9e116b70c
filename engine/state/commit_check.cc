#include "engine/state/commit_check.h"

#include <set>

namespace cairn {

Status CheckCommit(const StateCommit& commit) {
  std::set<std::string> put;
  for (const ResourceState& r : commit.put) {
    if (r.address.empty())
      return Status::InvalidArgument("state commit: a resource has no address");
    if (r.kind.empty()) {
      return Status::InvalidArgument("state commit: resource " + r.address + " has no kind");
    }
    if (ContainsUnknown(r.attributes)) {
      return Status::InvalidArgument("state commit: resource " + r.address +
                                     " has a value not known until apply; unknown values are "
                                     "never written to state");
    }
    if (!put.insert(r.address).second) {
      return Status::InvalidArgument("state commit: resource " + r.address + " is put twice");
    }
  }
  for (const std::string& a : commit.remove) {
    if (put.count(a) != 0) {
      return Status::InvalidArgument("state commit: resource " + a + " is both put and removed");
    }
  }
  std::set<std::string> from, to;
  for (const auto& [f, t] : commit.moves) {
    if (f.empty() || t.empty() || f == t) {
      return Status::InvalidArgument("state commit: invalid move '" + f + "' -> '" + t + "'");
    }
    if (!from.insert(f).second || !to.insert(t).second) {
      return Status::InvalidArgument("state commit: move '" + f + "' -> '" + t +
                                     "' overlaps another move");
    }
  }
  if (commit.outputs) {
    for (const auto& [name, v] : *commit.outputs) {
      if (ContainsUnknown(v)) {
        return Status::InvalidArgument("state commit: output " + name +
                                       " has a value not known until apply");
      }
    }
  }
  if (commit.restore) {
    if (commit.restore->lineage.empty()) {
      return Status::InvalidArgument("state commit: a restore needs a lineage");
    }
    if (commit.restore->min_serial < 0 || commit.restore->min_sequence < 0) {
      return Status::InvalidArgument("state commit: a restore's serial and sequence are >= 0");
    }
  }
  return Status::Ok();
}

Status CheckJournalEntries(std::span<const JournalEntry> entries) {
  std::set<int64_t> seqs;
  for (const JournalEntry& entry : entries) {
    if (entry.seq <= 0) {
      return Status::InvalidArgument(
          "journal entry needs a sequence number from ReserveSequences()");
    }
    if (entry.address.empty() || !IsOperation(entry.action)) {
      return Status::InvalidArgument("journal entry " + std::to_string(entry.seq) +
                                     " needs an address and an action (create, update or "
                                     "delete)");
    }
    if (!seqs.insert(entry.seq).second) {
      return Status::AlreadyExists("journal entry " + std::to_string(entry.seq) +
                                   " is given twice");
    }
  }
  return Status::Ok();
}

Result<Action> ParseJournalAction(const std::string& text, int64_t seq, const std::string& store) {
  std::optional<Action> action = ParseAction(text);
  if (!action || !IsOperation(*action)) {
    return Status::FailedPrecondition(store + ": journal entry " + std::to_string(seq) +
                                      " has an unknown action \"" + text + "\"");
  }
  return *action;
}

Status CheckSequenceCount(int64_t count) {
  if (count < 1) {
    return Status::InvalidArgument("cannot reserve " + std::to_string(count) +
                                   " sequence numbers: at least 1");
  }
  return Status::Ok();
}

}  // namespace cairn
