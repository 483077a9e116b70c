#include "engine/apply/apply_journal.h"

#include <algorithm>

#include "base/digest.h"
#include "engine/apply/apply.h"
#include "engine/apply/apply_graph.h"
#include "engine/crash_point.h"

namespace cairn {

JournalBatcher::JournalBatcher(int workers)
    : low_water_(static_cast<size_t>(std::max(1, workers)) / 2),
      target_(static_cast<size_t>(std::max(1, workers)) + low_water_) {}

bool JournalBatcher::MayJournal(const ApplyWalk& walk) const {
  return !writing_ && walk.has_ready() && journaled_.size() < target_;
}

std::vector<size_t> JournalBatcher::TakeChunk(ApplyWalk& walk, bool sending) {
  std::vector<size_t> chunk;
  // MayJournal guarantees a chunk that is not empty: the slot taken here is
  // freed only by the Written of that chunk.
  if (!MayJournal(walk) || (sending && journaled_.size() >= low_water_)) return chunk;
  while (journaled_.size() + chunk.size() < target_ && walk.has_ready()) {
    chunk.push_back(walk.TakeReady());
  }
  writing_ = true;
  return chunk;
}

void JournalBatcher::Written(std::span<const size_t> journaled) {
  writing_ = false;
  journaled_.insert(journaled_.end(), journaled.begin(), journaled.end());
}

size_t JournalBatcher::TakeJournaled() {
  size_t node = journaled_.front();
  journaled_.pop_front();
  return node;
}

Status JournalBatcher::Write(StateStore& store, std::span<const JournalEntry> entries) {
  Status st = store.JournalBeginAll(entries);
  if (st.ok()) {
    for (size_t i = 0; i < entries.size(); ++i) CrashPoint("apply.journaled");
  }
  return st;
}

JournalEntry JournalEntryFor(const PlannedChange& c, Action op, bool deposed, int64_t seq,
                             const std::string& lineage, const PreparedMutation& prepared,
                             int64_t now) {
  JournalEntry entry;
  entry.seq = seq;
  entry.address = deposed ? DeposedKey(c) : c.address;
  entry.action = op;
  entry.kind = c.kind;
  entry.remote_id = op != Action::kCreate ? c.remote_id : "";
  entry.method = prepared.method;
  entry.path = prepared.path;
  entry.body = prepared.body;
  entry.idempotency_key = IdempotencyKey(lineage, entry.seq, entry.action, c.address);
  entry.started_at = now;
  entry.context = {{"depends_on", c.depends_on}};
  // The object a create_before_destroy replace deposes: recovery records
  // it as deposed, as this run would, rather than losing track of it.
  if (op == Action::kCreate && c.CreatesBeforeDeleting()) entry.context["deposes"] = c.remote_id;
  return entry;
}

std::string IdempotencyKey(const std::string& lineage, int64_t seq, Action action,
                           const std::string& address) {
  return "cairn-" + lineage + "-" + std::to_string(seq) + "-" + ActionName(action) + "-" +
         Sha256Hex(address).substr(0, 16);
}

}  // namespace cairn
