// Apply: carries out a Plan against a Provider, recording every step in a
// StateStore so that nothing is lost or done twice, whatever fails and
// whenever the process dies.
//
// The apply graph is built from the plan's changes only (apply can never
// touch what the plan did not show; engine/apply/apply_graph.h): creates
// and updates after the changes of what they depend on; deletes after the
// deletes and updates of what depended on them; a replace is a delete then
// a create (or, with create_before_destroy, a create then a delete of the
// deposed object). Up to `parallelism` operations run at once; a failure
// skips everything that depends on it while independent branches go on
// (engine/apply/apply_walk.h).
//
// Each operation follows the exactly-once protocol, written down once in
// engine/state/state_store.h, with its sequence number from one
// ReserveSequences call for the whole run. The run's parts, each in its own
// header here: ApplyGraph (the operations and their order), ApplyWalk (what
// may start), JournalBatcher (ready operations journaled ahead, several per
// synced write), ApplySender (a journaled request sent), WaitHandOff (waits
// held by the provider's watcher, not by a worker) and the recorder
// (apply_recorder.h: results committed, deferred ones off the workers);
// OperationTimes (apply_timing.h) times them for the progress events.
// An entry journaled ahead but not sent is cleared when a stop ends the
// run; after a kill, the next run sends it (RecoverJournal).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/diagnostic.h"
#include "engine/manifest/config.h"
#include "engine/plan/plan.h"
#include "engine/policy/policy.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

struct ProgressEvent {
  // kWaiting: the request was answered; the resource is provisioning (or
  // being deleted) and the operation holds no worker until it is over.
  enum class Phase { kStart, kWaiting, kStillRunning, kDone, kFailed, kSkipped, kRecovered };
  Phase phase = Phase::kStart;
  std::string address;
  Action operation = Action::kCreate;  // kCreate, kUpdate or kDelete (IsOperation)
  std::string id;                      // remote id, once known
  std::chrono::milliseconds elapsed{0};
  std::string message;  // failure reason, skip cause
};

struct ApplyOptions {
  // The write-only values the manifests give, by their placeholder
  // (write_only.h; WriteOnlyValues in operations.h): what RecoverJournal
  // puts back into a journaled body before sending it again.
  std::map<std::string, Value> write_only_values;
  // Requests in flight at once (sent and not yet answered). An operation
  // waiting for its resource to be ready holds none of these.
  int parallelism = kDefaultParallelism;
  // Operations waiting at once for their resource to be ready (or gone);
  // a further one is sent only when one of them is over. A wait costs no
  // worker, no thread and no request of its own (the provider's watcher
  // answers every wait of a kind with one listing), and little memory:
  // measured at 10,000 instances, peak RSS and CPU time were within noise
  // with 1,000 or 20,000 waiting, while a bound of 1,000 made 10 rounds of
  // provisioning out of one (docs/benchmarks.md, issue 33). So the bound
  // is a memory guard for stacks beyond 100,000, not a pace.
  int max_pending = 100'000;
  std::chrono::seconds create_timeout{600};
  std::chrono::seconds update_timeout{600};
  std::chrono::seconds delete_timeout{600};
  // Period of kStillRunning events for long operations.
  std::chrono::milliseconds progress_interval{10'000};
  // The run's time: operation durations, journal timestamps (the real clock
  // when null). Waits on the API are the provider's, on its own clock.
  Clock* clock = nullptr;
  std::function<void(const ProgressEvent&)> progress;  // called from worker threads, serialised
  // Graceful stop (SIGINT): no new operations start; running ones finish and
  // are recorded.
  std::stop_token stop;
  // Kinds whose API cannot deduplicate creates: an interrupted create is
  // recovered by finding the resource by name first.
  std::set<std::string> find_by_name_kinds;
  // Policies (engine/policy/policy.h) checked again on each create, update
  // and replace once its values are known, before its request is sent: one
  // a mandatory policy refuses is held back (not sent), with what depends
  // on it, as a failed precondition is. The plan checked them with what it
  // knew; this catches what was unknown then.
  std::vector<PolicyConfig> policies;
  // The kinds, for checking each create's and update's result against the
  // plan (engine/apply/object_compatible.h): reference fields compare by
  // canonical id. Empty: ids compare as written.
  KindCatalog kinds;
};

// What a run did. `skipped`: operations never started, because what they
// depend on failed, or the run was stopped (SIGINT) or met an API failing as
// a whole. `moved`: addresses moved in the state (`kind: moved`);
// `forgotten`: objects dropped from it, left in the API (`kind: removed`).
struct ApplySummary {
  int created = 0, updated = 0, replaced = 0, deleted = 0, moved = 0, failed = 0, skipped = 0;
  int forgotten = 0;
  int imported = 0;  // objects adopted into the state (`kind: import`)
  // Of `failed`: not sent, because a precondition did not hold then.
  int held_back = 0;
  bool interrupted = false;
  // Of the counts above, those of an interrupted run's operations completed
  // first (RecoverJournal), after Add.
  int recovered = 0;

  // Adds `recovery`'s counts (RecoveryResult::summary) to these: a summary
  // counts what happened, recovered operations included.
  void AddRecovered(const ApplySummary& recovery);
  int done() const { return created + updated + replaced + deleted; }
};

struct ApplyResult {
  ApplySummary summary;
  std::map<std::string, Value> outputs;  // evaluated after apply
  // The checks the plan could not decide (Plan::checks), decided at the end.
  std::vector<CheckResult> checks;
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics) && !summary.interrupted; }
};

// Refuses a saved plan whose lineage or serial no longer matches the state. A
// plan made before the stack had a state (no lineage, serial 0) applies to a
// state still at serial 0.
Status CheckPlanIsCurrent(const Plan& plan, const StateSnapshot& state);

ApplyResult Apply(const Plan& plan, Provider& provider, StateStore& store,
                  const ApplyOptions& options);

// Completes operations left in the journal by an interrupted run, through
// the same send, wait and commit path as Apply (its workers, watchers and
// crash points, named "recover.*"): each is re-sent with its original key
// and body and the response adopted (for find_by_name_kinds, a create whose
// resource already exists by name, with the values the journaled request
// asked for, is adopted without re-sending; a same-named object that differs
// belongs to someone else and is left alone). The entries are independent
// (an operation is journaled only once what it depends on is recorded) and
// run up to `parallelism` at once. A definite refusal clears its entry; an
// unknown outcome leaves it for the next run. Reports each completed one as
// a kRecovered event.
struct RecoveryResult {
  int recovered = 0;
  ApplySummary summary;      // what the recovery did, counted as an apply counts
  bool interrupted = false;  // stopped with entries left in the journal
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics) && !interrupted; }
};
RecoveryResult RecoverJournal(Provider& provider, StateStore& store, const ApplyOptions& options);

// The Idempotency-Key of one operation: derived only from persisted data (the
// state lineage, the operation's sequence number, the action and the address)
// and at most 255 characters: cairn-<lineage>-<seq>-<ActionName>-<hash>.
std::string IdempotencyKey(const std::string& lineage, int64_t seq, Action action,
                           const std::string& address);

}  // namespace cairn
