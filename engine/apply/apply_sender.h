// ApplySender: sends one journaled operation of an apply run to the
// Provider, exactly as journaled (its key and body), and says what came
// of it: a refusal, a delete of something already gone, or a request
// answered whose wait the run hands to the provider's watcher. An
// interrupted create of a kind the API cannot deduplicate
// (ApplyOptions::find_by_name_kinds) is first looked for by name, and
// adopted instead of sent when it is there and is what the request asked
// for (a same-named object that differs is someone else's).
//
// It records nothing and reports nothing: the run does, from the
// SendOutcome (the protocol: engine/state/state_store.h). Passes the crash
// point "apply.sent" (or "recover.sent" for an interrupted run's
// operation) once the request is answered. Thread-safe as the Provider
// is: it keeps no state of its own.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/status.h"
#include "engine/apply/apply.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

// A network failure or a deadline leaves the outcome of a sent mutation
// unknown: its journal entry must stay for recovery. Anything else was a
// definite answer.
bool OutcomeUnknown(const Status& status);

struct SendOutcome {
  // Not ok: refused (OutcomeUnknown false) or the outcome is unknown.
  Status status;
  std::vector<Diagnostic> diagnostics;  // the provider's
  // A delete of something already gone: nothing to wait for.
  bool already_gone = false;
  // A create or update: the resource as the API answered (or adopted).
  std::optional<RemoteResource> sent;
  // An interrupted run's operation: how it was completed, for its report.
  std::string how;
  // What to watch until the operation has taken effect (status ok and not
  // already_gone).
  WaitRequest wait;
};

class ApplySender {
 public:
  // Both outlive the sender.
  ApplySender(Provider& provider, const ApplyOptions& options)
      : provider_(provider), options_(options) {}

  // Sends `entry`'s request (`prepared`, as journaled) of an operation
  // `op` of `change`; `recovered`: an interrupted run's.
  SendOutcome Send(const PlannedChange& change, Action op, bool recovered,
                   const JournalEntry& entry, const PreparedMutation& prepared) const;

  // How long the wait of an operation `op` may last.
  std::chrono::seconds Timeout(Action op) const;

 private:
  std::optional<RemoteResource> FindOwnCreate(const std::string& kind,
                                              const JournalEntry& entry) const;

  Provider& provider_;
  const ApplyOptions& options_;
};

}  // namespace cairn
