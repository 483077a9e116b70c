// The progress of an apply or a destroy for people and machines: what each
// ProgressEvent prints (a line of text, or a JSON object for --json), and
// the counts of a run so far, which a terminal shows as one line rewritten
// in place ("creating 143/200, 57 waiting for provisioning, 0 failed,
// 12s"). Computing them is here; the CLI (cli/apply_output.h) only decides
// the mode, writes, and redraws the live line. Text is redacted.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include "base/value.h"
#include "engine/apply/apply.h"

namespace cairn {

// The operations the plan's changes make: one each, two for a replace.
int PlannedOperations(const Plan& plan);

// What the run is doing, for the live line: "destroying" for a destroy,
// "creating" when the plan only creates, else "applying".
std::string ProgressVerb(const Plan& plan, bool destroy);

// The line an event prints when every step gets a line (not a terminal:
// logs, CI), "" for the events that print none (an operation waiting for
// its resource, whose done line follows; internal milestones):
//   instance.web[0]: creating...
//   instance.web[0]: still creating... [10.0s elapsed]
//   instance.web[0]: creation complete after 0.6s [id=inst_1f...]
//   instance.web[0]: create failed after 42s: <why>
//   instance.web[0]: skipped: <why>
//   instance.web[0]: recovered the interrupted create (<how>) [id=...]
// Seconds with a tenth under ten, whole above. `color`: the address in
// bold, a failure in red.
std::string ProgressLine(const ProgressEvent& e, bool color);

// True for the events a live display keeps above its counter line (a
// failure, a skip, a recovery): what a user must read.
bool KeepsProgressLine(const ProgressEvent& e);

// The event as one JSON object (`--json`): {"event": "start" | "waiting" |
// "still_running" | "done" | "failed" | "skipped" | "recovered", "address",
// "operation", "elapsed_ms", "id" (once known), "message" (when there is
// one)}.
Value ProgressEventToJson(const ProgressEvent& e);

// The counts of a run so far, fed its events in order. Not thread-safe
// (Apply serialises its progress calls).
class ProgressTally {
 public:
  // `total`: the operations the run makes (PlannedOperations).
  explicit ProgressTally(int total = 0) : total_(total) {}
  void Add(const ProgressEvent& e);

  int total() const { return total_; }
  int done() const { return done_; }
  int failed() const { return failed_; }
  int skipped() const { return skipped_; }
  // Operations answered and waiting for their resource to be ready or gone.
  int waiting() const { return static_cast<int>(waiting_.size()); }

  // "creating 143/200, 57 waiting for provisioning, 0 failed, 12s" (and
  // ", 3 skipped" before the time when some were).
  std::string LiveLine(const std::string& verb, std::chrono::seconds elapsed) const;

 private:
  int total_;
  int done_ = 0, failed_ = 0, skipped_ = 0;
  std::set<std::string> waiting_;  // "operation address" of the operations waiting
};

}  // namespace cairn
