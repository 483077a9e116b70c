#include "engine/apply/apply.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <stop_token>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/apply/apply_graph.h"
#include "engine/apply/apply_journal.h"
#include "engine/apply/apply_recorder.h"
#include "engine/apply/apply_sender.h"
#include "engine/apply/apply_timing.h"
#include "engine/apply/apply_waits.h"
#include "engine/apply/apply_walk.h"
#include "engine/apply/object_compatible.h"
#include "engine/apply/write_only.h"
#include "engine/crash_point.h"
#include "engine/manifest/expr.h"
#include "engine/plan/conditions.h"
#include "engine/state/moves.h"

namespace cairn {
namespace {

// The one error of a failed operation: what failed, and why (`message`);
// the provider's own error, when it gave one, folded into the detail rather
// than said a second time. `recovering`: the operation was an interrupted
// run's, being completed.
Diagnostic Failure(const std::string& address, Action op, const std::string& message,
                   const std::vector<Diagnostic>& provider_diags = {}, bool recovering = false) {
  Diagnostic d;
  d.code = op == Action::kCreate   ? "create_failed"
           : op == Action::kUpdate ? "update_failed"
                                   : "delete_failed";
  d.summary = address + ": " + (recovering ? "recovering the interrupted " : "") + ActionName(op) +
              " failed: " + message;
  for (const Diagnostic& p : provider_diags) {
    if (!p.is_error()) continue;
    d.detail = "the API's code: " + p.code + (p.detail.empty() ? "" : "; " + p.detail);
    break;
  }
  return d;
}

void Append(std::vector<Diagnostic>& to, const std::vector<Diagnostic>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// An ApplyNode as the run carries it out: the graph's part, then what the
// operation gathers on its way.
struct Node {
  const PlannedChange* change = nullptr;
  Action op = Action::kCreate;
  bool deposed = false;  // delete of the old object of a create_before_destroy replace
  // Its journal entry is an interrupted run's (ApplyGraph::FromJournal):
  // it is completed, not started, and reported as recovered.
  bool recovered = false;
  // Set by JournalAhead, before the node is offered to the workers.
  std::optional<PreparedMutation> prepared;  // the request, exactly as journaled
  JournalEntry entry;
  // Set by Send: the resource as the create or update answered.
  std::optional<RemoteResource> sent;
  std::vector<Diagnostic> diagnostics;  // gathered while sending, for the outcome
  // Recovered only: how the interrupted operation was completed, for its
  // kRecovered event.
  std::string how;
  // Set by AfterWait when a create or update has taken effect: what the
  // recorder commits to the state before the node completes.
  struct Outcome {
    StateCommit commit;  // commit.put[0]: the resource as it now is
    bool ok = true;      // false: it exists, but the wait for it failed
    std::string message;
    std::vector<Diagnostic> diagnostics;
    // Checks of the ready resource that failed (a result incompatible with
    // the plan, or a postcondition): the resource exists, and is recorded,
    // but what depends on it is not applied. Reported as they are.
    std::vector<Diagnostic> checks_failed;
  };
  std::optional<Outcome> outcome;
};

// Runs an ApplyGraph: the operations of a plan, or those an interrupted run
// left in the journal (the graph says which, node by node; the run has no
// mode). The same send, wait and commit path, the same workers and
// watchers for both. Its roles, each a part of its own:
//   ApplyWalk       what may start (apply_walk.h)
//   JournalBatcher  what is journaled ahead, in chunks (apply_journal.h)
//   ApplySender     a journaled request sent (apply_sender.h)
//   WaitHandOff     the waits the provider's watcher holds (apply_waits.h)
//   RecordQueue     results committed off the workers (apply_recorder.h)
//   OperationTimes  durations, long operations to report (apply_timing.h)
// The run owns the threads (workers, the recorder, the monitor) and one
// lock, mu_, under which it keeps the parts that are not thread-safe.
class ApplyRun {
 public:
  // `plan`: what the nodes point into, its data sources, outputs, checks
  // and sensitive values (for a recovery, the changes describing the
  // entries).
  ApplyRun(const Plan& plan, ApplyGraph graph, Provider& provider, StateStore& store,
           const ApplyOptions& options, StateSnapshot initial)
      : plan_(plan),
        provider_(provider),
        store_(store),
        options_(options),
        clock_(options.clock ? *options.clock : SystemClock()),
        lineage_(initial.lineage),
        acyclic_(graph.acyclic),
        sender_(provider, options),
        workers_(
            std::max(1, std::min<int>(options.parallelism, static_cast<int>(graph.nodes.size())))),
        walk_(graph),
        journal_(workers_),
        waits_(options.max_pending),
        records_(static_cast<size_t>(workers_)),
        times_(graph.nodes.size()) {
    for (auto& [addr, rs] : initial.resources) values_[addr] = rs.attributes;
    // Data sources, as the plan read them ("data.KIND.NAME").
    for (const auto& [addr, attrs] : plan.data) values_[addr] = attrs;
    // No worker runs yet: the lock is taken to keep the accesses checked.
    MutexLock lock(mu_);
    for (ApplyNode& n : graph.nodes) {
      Node node{n.change, n.op, n.deposed, n.journaled.has_value()};
      if (n.journaled) {
        node.entry = std::move(*n.journaled);
        const JournalEntry& e = node.entry;
        node.prepared = PreparedMutation{e.kind, node.op, e.method, e.path, e.body, e.remote_id};
      }
      nodes_.push_back(std::move(node));
    }
  }

  // Runs the nodes to the end (or to a stop); false when the run could
  // not start, nothing sent.
  bool Walk() {
    // No worker runs yet, nor after they are joined below; the lock is taken
    // where what it guards is touched all the same (uncontended).
    if (!acyclic_) {
      MutexLock lock(mu_);
      result_.diagnostics.push_back({Severity::kError,
                                     "internal_error",
                                     "internal error: the apply graph has a cycle, please report",
                                     "",
                                     {}});
      return false;
    }
    // One sequence number per operation to journal, reserved in one write
    // rather than one per operation: node i's is first_seq_ + i.
    const bool to_journal =
        std::any_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.recovered; });
    if (to_journal) {
      auto first = store_.ReserveSequences(static_cast<int64_t>(nodes_.size()));
      if (!first.ok()) {
        MutexLock lock(mu_);
        result_.diagnostics.push_back(
            {Severity::kError,
             "state_error",
             "could not reserve sequence numbers in the state: " + first.status().ToString(),
             "",
             {}});
        return false;
      }
      first_seq_ = *first;
    }
    {
      MutexLock lock(mu_);
      // A recovered node is journaled already, and depends on nothing.
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].recovered) journal_.Offer(i);
      }
    }
    {
      // A stop wakes the waiting workers, so that they leave at once.
      std::stop_callback wake(options_.stop, [this] {
        MutexLock lock(mu_);
        cv_.NotifyAll();
      });
      std::vector<std::jthread> pool;
      for (int i = 0; i < workers_ && !nodes_.empty(); ++i) pool.emplace_back([this] { Worker(); });
      std::jthread recorder([this] { Recorder(); });
      std::jthread monitor([this](std::stop_token st) { Monitor(st); });
      for (auto& t : pool) t.join();
      {
        MutexLock lock(mu_);
        records_.WorkersGone();
      }
      record_cv_.NotifyOne();
      recorder.join();  // after recording what the workers left, even when stopped
    }                   // ~jthread: the monitor is asked to stop, wakes at once and is joined
    // Journaled ahead but never sent (the run was stopped): nothing happened.
    // A recovered entry stays: the interrupted run may have sent it. The
    // workers are gone: holding mu_ over the commits delays no one.
    MutexLock lock(mu_);
    for (size_t index : journal_.journaled()) {
      if (nodes_[index].recovered) continue;
      if (auto st = store_.Commit(StateCommit{.journal_done = nodes_[index].entry.seq}); !st.ok()) {
        result_.diagnostics.push_back({Severity::kWarning,
                                       "state_error",
                                       nodes_[index].change->address +
                                           ": could not clear its unsent journal entry (the "
                                           "next apply sends it): " +
                                           st.status().ToString(),
                                       "",
                                       {}});
      }
    }
    // Never started (a stop, or the API failing as a whole): skipped too.
    if (int never = walk_.waiting(); never > 0) {
      result_.summary.skipped += never;
      if (options_.stop.stop_requested()) result_.summary.interrupted = true;
    }
    return true;
  }

  // An apply's outputs and checks, once Walk is over. Also the run's last
  // write, made durable (kImmediate): it syncs the deferred commits before
  // it.
  void EvaluateOutputs() EXCLUDES(mu_) {
    std::map<std::string, Value> outputs;
    std::set<std::string> sensitive;
    // A destroy plan's outputs are those a targeted destroy keeps (none for
    // a whole destroy): the others are removed with what they refer to.
    std::vector<std::string> unknown;
    std::vector<Diagnostic> conditions;
    // After a failure, a condition that reads what was not made is left
    // undecided, not reported again: the failure says it already.
    bool failed_before = false;
    {
      MutexLock lock(mu_);
      failed_before = HasErrors(result_.diagnostics);
    }
    for (const auto& o : plan_.outputs) {
      Value v = ResolveReferences(o.value, Lookup());
      // An output whose precondition fails is recorded as null: what reads
      // it (another stack, a script) must not take a value it refuses.
      bool undecided = false;
      std::optional<Diagnostic> refused =
          o.preconditions.empty()
              ? std::nullopt
              : FirstFailing(o.preconditions, "output " + o.name + ": precondition",
                             "precondition_failed", nullptr, "the output is recorded as null",
                             failed_before ? &undecided : nullptr);
      if (refused || undecided) v = nullptr;
      if (refused) {
        conditions.push_back(std::move(*refused));
        v = nullptr;
      }
      if (ContainsUnknown(v)) unknown.push_back(o.name);
      outputs[o.name] = ContainsUnknown(v) ? Value(nullptr) : v;
      if (o.sensitive) sensitive.insert(o.name);
    }
    // The checks the plan could not decide, with what the apply made: a
    // failing one (or one still unknown) is a warning, as at plan.
    std::vector<CheckResult> checks;
    for (const CheckConfig& check : plan_.checks) {
      CheckResult outcome{check.name, CheckResult::Status::kPassed, {}};
      bool undecided = false;
      for (const ConditionConfig& assertion : check.asserts) {
        if (auto failed = FirstFailing({assertion}, "check " + check.name, "check_failed", nullptr,
                                       "", failed_before ? &undecided : nullptr)) {
          failed->severity = Severity::kWarning;
          outcome.status = CheckResult::Status::kFailed;
          outcome.messages.push_back(failed->summary);
          conditions.push_back(std::move(*failed));
        }
      }
      if (undecided && outcome.status == CheckResult::Status::kPassed) {
        outcome.status = CheckResult::Status::kUnknown;
      }
      checks.push_back(std::move(outcome));
    }
    {
      MutexLock lock(mu_);
      for (Diagnostic& d : conditions) result_.diagnostics.push_back(std::move(d));
      result_.checks = std::move(checks);
      result_.outputs = outputs;
      // Recorded as null, and said when nothing failed: an output still
      // unknown once every operation succeeded reads something no resource
      // gave (after a failure, the failure says it already).
      if (HasErrors(result_.diagnostics)) unknown.clear();
      for (const std::string& name : unknown) {
        result_.diagnostics.push_back(
            {Severity::kWarning,
             "output_unknown",
             "output \"" + name + "\" is not known after the apply, and is recorded as null",
             "it reads a value no resource gave: one that failed or was held back, or an "
             "attribute the API does not return",
             {}});
      }
    }
    auto serial = store_.Commit(
        StateCommit{.outputs = std::move(outputs), .sensitive_outputs = std::move(sensitive)});
    if (!serial.ok()) {
      MutexLock lock(mu_);
      result_.diagnostics.push_back(
          {Severity::kError,
           "state_error",
           "could not record the outputs in the state: " + serial.status().ToString(),
           "",
           {}});
    }
  }

  ApplyResult TakeResult() {
    MutexLock lock(mu_);
    return std::move(result_);
  }

 private:
  // Each worker finishes operations whose wait is over (waits_, first: that
  // frees their dependents), sends journaled ones while fewer than
  // max_pending wait, and journals the next ready ones ahead (JournalAhead)
  // when few are left: one synced write for many operations instead of one
  // each, off the path of the others. A worker holds an operation only while
  // its request is in flight or its result is being recorded, never while
  // the resource provisions: --parallelism bounds the requests in flight.
  //
  // The wait below has no deadline: a worker wakes for exactly what its
  // predicate names, and whoever makes it true notifies cv_ (see cv_). So
  // every wake-up finds something to do (no spinning while resources
  // provision), and a worker that could neither send (max_pending wait) nor
  // journal (the batcher's target already journaled) waits for a wait to end.
  void Worker() {
    auto may_send = [&]() REQUIRES(mu_) { return journal_.has_journaled() && waits_.has_room(); };
    for (;;) {
      std::optional<size_t> index;                             // to send
      std::optional<std::pair<size_t, WaitResponse>> settled;  // to finish
      std::vector<size_t> chunk;
      {
        MutexLock lock(mu_);
        cv_.Wait(mu_, [&]() REQUIRES(mu_) {
          // Stopping, nothing new starts, but what was sent is finished.
          return waits_.has_settled() || Finished() || (Stopping() && waits_.pending() == 0) ||
                 (!Stopping() && (may_send() || journal_.MayJournal(walk_)));
        });
        if (waits_.has_settled()) {
          settled = waits_.TakeSettled();
          ++running_;
        } else if (Finished() || Stopping()) {
          cv_.NotifyAll();
          return;
        } else {
          if (may_send()) {
            index = journal_.TakeJournaled();
            walk_.Start(*index);
            times_.Start(*index, clock_.Now());
            ++running_;
            waits_.Reserve();  // before sending, so max_pending holds
          }
          // Nothing to send, or few journaled operations left for the
          // others: the chunk, when not empty, holds the batcher's slot
          // until the JournalAhead of that chunk.
          chunk = journal_.TakeChunk(walk_, index.has_value());
        }
      }
      if (!chunk.empty()) JournalAhead(chunk);
      if (settled) {
        bool ok = AfterWait(settled->first, std::move(settled->second));
        FinishNode(settled->first, ok);
        continue;
      }
      if (!index) continue;
      Node& node = nodes_[*index];
      if (!node.recovered) {
        Emit({ProgressEvent::Phase::kStart, node.change->address, node.op, node.change->remote_id});
      }
      Sent sent = Send(*index);
      if (sent == Sent::kWatching) {
        MutexLock lock(mu_);
        --running_;       // the hand-off holds it now
        cv_.NotifyOne();  // a slot is free
        continue;
      }
      {
        MutexLock lock(mu_);
        waits_.Release();  // it did not wait after all
      }
      FinishNode(*index, sent == Sent::kDone);
    }
  }

  // The end of node `index` on a worker: a create's or update's outcome goes
  // to the recorder (or is recorded here), then the node completes.
  void FinishNode(size_t index, bool ok) EXCLUDES(mu_) {
    Node& node = nodes_[index];
    MutexUnlockableLock lock(mu_);
    if (node.outcome) {
      // A deferred commit (no sync) goes to the recorder, and this worker
      // on to the next operation, unless the recorder is a worker's worth
      // behind. A synced one stays here, where the state's group commit
      // can share one sync among the workers.
      if (records_.HandOff(index, node.outcome->commit.durability)) {
        --running_;
        record_cv_.NotifyOne();
        return;
      }
      lock.Unlock();
      ok = Record(index);
      lock.Lock();
    }
    --running_;
    EmitAfter(lock, Complete(index, ok));
  }

  // Commits the outcomes of the creates and updates that took effect, in
  // the order they did, and completes their nodes (which makes their
  // dependents ready). Leaves once the workers have and nothing is left to
  // record.
  void Recorder() {
    MutexUnlockableLock lock(mu_);
    for (;;) {
      // No deadline: only the recorder waits on record_cv_, and both of its
      // conditions are set under mu_ and notified (FinishNode, Walk).
      record_cv_.Wait(mu_, [&]() REQUIRES(mu_) { return records_.ShouldWake(); });
      if (!records_.has_next()) return;
      size_t index = records_.TakeNext();
      lock.Unlock();
      bool ok = Record(index);
      lock.Lock();
      records_.Recorded();
      EmitAfter(lock, Complete(index, ok));
      lock.Lock();
    }
  }

  // Nothing left to run, journal or record: the workers may go.
  bool Finished() const REQUIRES(mu_) {
    return !walk_.has_ready() && !journal_.has_journaled() && !journal_.writing() &&
           running_ == 0 && !records_.busy() && waits_.idle();
  }

  // Records the end of node `index` (ran, or failed before it could run),
  // makes its dependents ready or skips them and wakes the workers this
  // concerns; returns what to report, for EmitAfter (the caller's, which
  // lets go of mu_ only once the callback is serialised).
  std::vector<ProgressEvent> Complete(size_t index, bool ok) REQUIRES(mu_) {
    Node& node = nodes_[index];
    auto elapsed = walk_.state(index) == ApplyWalk::State::kRunning
                       ? times_.Elapsed(index, clock_.Now())
                       : std::chrono::milliseconds{0};
    std::vector<ProgressEvent> events;
    size_t now_ready = 0;
    if (ok) {
      now_ready = walk_.Done(index);
      if (node.recovered) {
        events.push_back({ProgressEvent::Phase::kRecovered, node.change->address, node.op,
                          done_ids_[index], elapsed, node.how});
      } else {
        events.push_back({ProgressEvent::Phase::kDone, node.change->address, node.op,
                          done_ids_[index], elapsed});
      }
    } else {
      ++result_.summary.failed;
      events.push_back({ProgressEvent::Phase::kFailed, node.change->address, node.op, "", elapsed,
                        last_error_[index]});
      for (size_t s : walk_.Fail(index)) {
        ++result_.summary.skipped;
        events.push_back({ProgressEvent::Phase::kSkipped,
                          nodes_[s].change->address,
                          nodes_[s].op,
                          "",
                          {},
                          "not attempted because " + node.change->address + " failed"});
      }
    }
    // Wake only whom this completion concerns: a waiting worker per new
    // ready node, or all of them at the end.
    if (Finished() || Stopping()) {
      cv_.NotifyAll();
    } else {
      for (size_t i = 0; i < now_ready; ++i) cv_.NotifyOne();
    }
    return events;
  }

  // Builds the requests of `chunk` (ready nodes taken from the walk) and journals
  // them in one write, then offers them to the workers. A node whose request
  // cannot be built fails alone; if the write fails, they all fail.
  void JournalAhead(const std::vector<size_t>& chunk) EXCLUDES(mu_) {
    std::vector<size_t> built;
    std::vector<JournalEntry> entries;
    for (size_t index : chunk) {
      if (PrepareNode(nodes_[index])) {
        built.push_back(index);
        entries.push_back(nodes_[index].entry);
      } else {
        MutexUnlockableLock lock(mu_);
        EmitAfter(lock, Complete(index, false));
      }
    }
    Status st = JournalBatcher::Write(store_, entries);
    MutexUnlockableLock lock(mu_);
    journal_.Written(st.ok() ? std::span<const size_t>(built) : std::span<const size_t>());
    if (!st.ok()) {
      for (size_t index : built) {
        const Node& n = nodes_[index];
        last_error_[index] = "could not write the state journal: " + st.ToString();
        result_.diagnostics.push_back(Failure(n.change->address, n.op, last_error_[index]));
      }
    }
    cv_.NotifyAll();
    if (!st.ok()) {
      for (size_t index : built) {
        EmitAfter(lock, Complete(index, false));
        lock.Lock();
      }
    }
  }

  // A stop request (SIGINT), or the API failing as a whole: no operation
  // starts, the ones sent finish.
  bool Stopping() const { return options_.stop.stop_requested() || api_failed_; }

  // Once a second: syncs the deferred commits (Sync), and every
  // progress_interval reports long operations. Sleeps on its own condition
  // variable, woken early only by its stop request, so completions (cv_)
  // never make it scan the nodes.
  void Monitor(std::stop_token st) {
    constexpr std::chrono::milliseconds kSyncInterval{1000};
    MutexUnlockableLock lock(mu_);
    CondVar tick;
    auto last_report = clock_.Now();
    while (!st.stop_requested()) {
      const auto period =
          std::min<std::chrono::milliseconds>(kSyncInterval, options_.progress_interval);
      tick.WaitUntil(mu_, st, std::chrono::steady_clock::now() + period, [] { return false; });
      if (st.stop_requested()) break;
      lock.Unlock();
      (void)store_.Sync();  // a failure shows again in the run's last, synced commit
      lock.Lock();
      auto now = clock_.Now();
      if (now - last_report < options_.progress_interval) continue;
      last_report = now;
      std::vector<ProgressEvent> events;
      auto running = [&](size_t i)
                         REQUIRES(mu_) { return walk_.state(i) == ApplyWalk::State::kRunning; };
      for (auto [i, elapsed] : times_.StillRunning(now, options_.progress_interval, running)) {
        const Node& n = nodes_[i];
        events.push_back(
            {ProgressEvent::Phase::kStillRunning, n.change->address, n.op, "", elapsed});
      }
      EmitAfter(lock, events);
      lock.Lock();
    }
  }

  void Emit(const ProgressEvent& e) EXCLUDES(mu_) {
    MutexLock out(emit_mu_);
    if (options_.progress) options_.progress(e);
  }
  // Releases `lock` (on mu_), then calls the progress callback with
  // `events`. emit_mu_ is taken before mu_ is let go, so nothing that follows
  // from this state change (a dependent's start line) is shown before them.
  // The callback's I/O runs without mu_; only a worker that has finished a
  // node while another prints waits for it (holding mu_ meanwhile).
  //
  // Not analysed: it lets go of mu_ through the caller's `lock`, and clang
  // (14) cannot check a function that releases a scoped lock passed to it
  // (RELEASE takes no scoped-lock parameter). RELEASE(mu_) still tells the
  // callers' analysis that mu_ is no longer held. The body touches nothing
  // mu_ guards.
  void EmitAfter(MutexUnlockableLock& lock, const std::vector<ProgressEvent>& events)
      RELEASE(mu_) NO_THREAD_SAFETY_ANALYSIS {
    if (events.empty() || !options_.progress) {
      lock.Unlock();
      return;
    }
    MutexLock out(emit_mu_);
    lock.Unlock();
    for (const auto& e : events) options_.progress(e);
  }

  AttributeLookup Lookup() {
    return [this](const ResourceAddress& addr, const std::string& attr) -> std::optional<Value> {
      MutexLock lock(mu_);
      auto it = values_.find(addr.ToString());
      if (it == values_.end()) return std::nullopt;
      if (attr.empty()) return it->second;  // the whole object
      if (it->second.contains(attr)) return it->second.at(attr);
      return Value(nullptr);
    };
  }

  // One error per cause: the operation's failure with the provider's error
  // folded in; or, when the API as a whole failed (unreachable, credentials
  // refused), that failure once for the run, and nothing more is started
  // (every request would fail alike). The provider's warnings are kept.
  void Fail(size_t index, std::vector<Diagnostic> diags, const std::string& address, Action op,
            const std::string& message) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    last_error_[index] = message;
    if (std::any_of(diags.begin(), diags.end(), IsApiWideFailure)) {
      AppendOncePerCause(result_.diagnostics, diags);
      if (!api_failed_.exchange(true)) cv_.NotifyAll();  // the workers stop starting
      return;
    }
    result_.diagnostics.push_back(Failure(address, op, message, diags, nodes_[index].recovered));
    for (Diagnostic& d : diags) {
      if (!d.is_error()) result_.diagnostics.push_back(std::move(d));
    }
  }

  // A condition of the node that does not hold (PlannedChange's
  // preconditions and postconditions, a result the plan did not promise):
  // reported where it is written, the node failed, and what depends on it
  // skipped. The node's failure message is the first one's.
  void FailCondition(size_t index, Diagnostic d) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    last_error_.try_emplace(index, d.summary);
    result_.diagnostics.push_back(std::move(d));
  }

  // The first of `conditions` that does not hold with what is known now,
  // as a diagnostic; nullopt when they all do. `what`: "ADDRESS:
  // precondition". A condition still unknown fails too (apply cannot act
  // on what it cannot check), unless `unknown` is given: then it is set,
  // and the condition passed over.
  std::optional<Diagnostic> FirstFailing(const std::vector<ConditionConfig>& conditions,
                                         const std::string& what, const std::string& code,
                                         const Value* self, const std::string& detail,
                                         bool* unknown = nullptr) EXCLUDES(mu_) {
    for (const ConditionConfig& cond : conditions) {
      ConditionVerdict v = DecideCondition(cond, Lookup(), self, plan_.sensitive_values);
      if (unknown && v.kind == ConditionVerdict::Kind::kUnknown) {
        *unknown = true;
        continue;
      }
      switch (v.kind) {
        case ConditionVerdict::Kind::kHolds:
          continue;
        case ConditionVerdict::Kind::kFails:
          return Diagnostic{Severity::kError, code, what + " failed: " + v.message, detail,
                            cond.location};
        case ConditionVerdict::Kind::kInvalid:
          return Diagnostic{Severity::kError, "invalid_condition", what + ": " + v.message, detail,
                            cond.location};
        case ConditionVerdict::Kind::kUnknown:
          return Diagnostic{Severity::kError, code,
                            what +
                                " could not be decided: it reads a value that is still "
                                "unknown",
                            detail, cond.location};
      }
    }
    return std::nullopt;
  }

  // The node's request, built before anything is recorded or sent, and its
  // journal entry. False (the failure recorded) when it cannot be built.
  bool PrepareNode(Node& node) EXCLUDES(mu_) {
    const PlannedChange& c = *node.change;
    size_t index = &node - nodes_.data();
    PrepareRequest prep{c.kind, node.op == Action::kCreate   ? Action::kCreate
                                : node.op == Action::kUpdate ? Action::kUpdate
                                                             : Action::kDelete};
    if (node.op != Action::kCreate) prep.id = c.remote_id;
    Value resolved;
    std::vector<Value> write_only;  // the values sent, out of the journal
    // Preconditions, before the request. A replace that deletes first
    // checks them before its delete too, as far as they are known then
    // (what they read may not be made yet): a false one keeps the old
    // object rather than leaving neither.
    const bool replace_delete =
        node.op == Action::kDelete && c.action == Action::kReplace && !node.deposed;
    if ((node.op != Action::kDelete || replace_delete) && !c.preconditions.empty()) {
      bool unknown = false;
      if (auto failed =
              FirstFailing(c.preconditions, c.address + ": precondition", "precondition_failed",
                           nullptr, "not sent: it and what depends on it were held back",
                           replace_delete ? &unknown : nullptr)) {
        FailCondition(index, std::move(*failed));
        MutexLock lock(mu_);
        ++result_.summary.held_back;
        return false;
      }
    }
    if (node.op != Action::kDelete) {
      std::vector<ResolveError> failed;
      resolved = ResolveReferences(c.after, Lookup(), nullptr, &failed);
      if (!failed.empty()) {
        const ResolveError& e = failed.front();
        Fail(index, {}, c.address, node.op,
             MaskSecrets((e.path.empty() ? "" : e.path + ": ") + e.message + " (" + e.code + ")",
                         plan_.sensitive_values));
        return false;
      }
      if (ContainsUnknown(resolved)) {
        Fail(index, {}, c.address, node.op,
             "a value it needs is still unknown after its dependencies were applied");
        return false;
      }
      if (!options_.policies.empty()) {
        for (const PolicyResult& r :
             EvaluateChangePolicies(options_.policies, c, resolved, plan_.sensitive_values)) {
          if (r.status != PolicyResult::Status::kFailed &&
              r.status != PolicyResult::Status::kError) {
            continue;
          }
          if (r.enforcement == PolicyConfig::Enforcement::kAdvisory) {
            MutexLock lock(mu_);
            result_.diagnostics.push_back(
                {Severity::kWarning, "policy_failed",
                 c.address + ": advisory policy " + r.policy + " failed: " + r.message, "",
                 r.policy_location});
            continue;
          }
          FailCondition(index,
                        {Severity::kError, "policy_failed",
                         c.address + ": mandatory policy " + r.policy + " failed: " + r.message,
                         "not sent: it and what depends on it were held back", r.policy_location});
          MutexLock lock(mu_);
          ++result_.summary.held_back;
          return false;
        }
      }
      if (node.op == Action::kCreate) {
        prep.spec = resolved;
        // Write-only values go to the request alone (write_only.h); the
        // policies above did not see them, nothing reports them.
        for (const auto& [field, v] : c.write_only.items()) {
          std::vector<ResolveError> wo_failed;
          Value value = ResolveReferences(v, Lookup(), nullptr, &wo_failed);
          if (!wo_failed.empty() || v.is_null() || ContainsUnknown(value)) {
            Fail(index, {}, c.address, node.op,
                 "write-only field " + field +
                     (v.is_null() ? " has no value: the manifests no longer set it"
                                  : " could not be resolved"));
            return false;
          }
          prep.spec[field] = value;
          write_only.push_back(std::move(value));
        }
      } else {
        for (const auto& ch : c.changes) {
          if (resolved.contains(ch.field)) prep.spec[ch.field] = resolved[ch.field];
        }
      }
    }
    auto prepared = provider_.Prepare(prep);
    if (!prepared.ok()) {
      Fail(index, {}, c.address, node.op, prepared.status().message());
      return false;
    }
    CrashPoint("apply.prepared");
    node.entry = JournalEntryFor(c, node.op, node.deposed, first_seq_ + static_cast<int64_t>(index),
                                 lineage_, *prepared, clock_.UnixSeconds());
    if (!write_only.empty()) node.entry.body = SealWriteOnly(node.entry.body, write_only);
    node.prepared = std::move(*prepared);
    return true;
  }

  // Sends node `index`'s journaled request (ApplySender). A refusal is
  // recorded here (kFailed); a delete of something already gone is
  // committed at once (kDone); anything else is handed to the provider's
  // watcher until it has taken effect (kWatching): AfterWait finishes it,
  // on whichever worker takes it from waits_. The worker meanwhile sends
  // the next operation.
  enum class Sent { kFailed, kDone, kWatching };
  Sent Send(size_t index) EXCLUDES(mu_) {
    Node& node = nodes_[index];
    const PlannedChange& c = *node.change;
    SendOutcome out = sender_.Send(c, node.op, node.recovered, node.entry, *node.prepared);
    node.how = std::move(out.how);
    node.sent = std::move(out.sent);
    if (!out.status.ok()) {
      Fail(index, std::move(out.diagnostics), c.address, node.op, out.status.message());
      // A definite refusal clears the journal entry (nothing happened); an
      // unknown outcome leaves it for recovery.
      if (!OutcomeUnknown(out.status)) FinishJournal(node.entry.seq);
      return Sent::kFailed;
    }
    Append(node.diagnostics, out.diagnostics);
    if (out.already_gone) return CommitDelete(index) ? Sent::kDone : Sent::kFailed;
    if (!node.recovered) {
      Clock::time_point started;
      {
        MutexLock lock(mu_);
        started = times_.started(index);
      }
      Emit({ProgressEvent::Phase::kWaiting, c.address, node.op,
            node.op == Action::kDelete ? c.remote_id : node.sent->id,
            std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - started),
            node.op == Action::kDelete ? "waiting until deleted" : "waiting until ready"});
    }
    // The provider calls this exactly once, by the wait's own deadline
    // (Provider::Watch; the watchers end every wait at it).
    provider_.Watch(out.wait, [this, index](WaitResponse r) {
      MutexLock lock(mu_);
      waits_.Settle(index, std::move(r));
      cv_.NotifyOne();
    });
    return Sent::kWatching;
  }

  // The rest of node `index`'s operation once its wait is over: a delete is
  // committed here; a create's or update's outcome is left in node.outcome
  // for Record.
  bool AfterWait(size_t index, WaitResponse wait) EXCLUDES(mu_) {
    Node& node = nodes_[index];
    const PlannedChange& c = *node.change;
    Append(node.diagnostics, wait.diagnostics);
    if (node.op == Action::kDelete) {
      if (!wait.status.ok()) {
        // The API accepted the delete; the resource is on its way out. Keep
        // the journal so the next run confirms it.
        Fail(index, node.diagnostics, c.address, node.op, wait.status.message());
        return false;
      }
      return CommitDelete(index);
    }
    CrashPoint(node.recovered ? "recover.ready" : "apply.ready");
    // The resource exists whatever the wait said: record it.
    RemoteResource remote = wait.resource ? std::move(*wait.resource) : *node.sent;
    // Deferred where the API replays by key: until a later write (at most
    // a second away, see Monitor) syncs it, the pending journal entry stands
    // for it; a machine crash in between leaves the entry, which the next
    // run re-sends with its key, and the API answers with this result. An
    // API that cannot deduplicate creates could only be searched by name,
    // so those results are synced at once.
    const Durability durability =
        options_.find_by_name_kinds.count(c.kind) ? Durability::kImmediate : Durability::kDeferred;
    // An API that echoed a write-only field does not put it in the state.
    if (auto kind = options_.kinds.find(c.kind); kind != options_.kinds.end()) {
      for (const std::string& field : kind->second.write_only) remote.attributes.erase(field);
    }
    StateCommit commit =
        ResultCommit(c, node.op, node.entry.seq, std::move(remote), wait, durability);
    // The recorder commits it (Record). Until then the journal entry stands
    // for the operation, as it did while the request was in flight.
    bool ok = wait.status.ok();
    node.outcome =
        Node::Outcome{std::move(commit), ok, wait.status.message(), std::move(node.diagnostics)};
    Node::Outcome& o = *node.outcome;
    if (ok) {
      // What the API returned must be what the plan promised.
      o.checks_failed = AssertObjectCompatible(c, o.commit.put[0].attributes, options_.kinds,
                                               plan_.sensitive_values);
    }
    if (ok && o.checks_failed.empty() && !c.postconditions.empty()) {
      // With `self` as the API returned it, now that it is ready.
      if (auto failed =
              FirstFailing(c.postconditions, c.address + ": postcondition", "postcondition_failed",
                           &o.commit.put[0].attributes,
                           "it exists and is recorded; what depends on it was not applied")) {
        o.checks_failed.push_back(std::move(*failed));
      }
    }
    if (!o.checks_failed.empty()) {
      ok = o.ok = false;
      o.message = o.checks_failed.front().summary;
    }
    return ok;
  }

  // Records node `index`'s delete that took effect (or found nothing to
  // delete).
  bool CommitDelete(size_t index) EXCLUDES(mu_) {
    const Node& node = nodes_[index];
    const PlannedChange& c = *node.change;
    auto serial =
        RecordCommit(store_, DeleteCommit(c, node.deposed, node.entry.seq), node.recovered);
    if (!serial.ok()) {
      Fail(index, {}, c.address, node.op,
           "could not record the delete: " + serial.status().ToString());
      return false;
    }
    MutexLock lock(mu_);
    if (!node.deposed) values_.erase(c.address);
    if (c.action == Action::kDelete) ++result_.summary.deleted;
    done_ids_[index] = c.remote_id;
    return true;
  }

  // Commits node `index`'s create or update outcome (left in node.outcome
  // by AfterWait) and records the new values for the nodes that refer to
  // it. False when the outcome was a failure or cannot be recorded.
  bool Record(size_t index) EXCLUDES(mu_) {
    Node& node = nodes_[index];
    const PlannedChange& c = *node.change;
    Node::Outcome outcome = std::move(*node.outcome);
    node.outcome.reset();
    auto serial = RecordCommit(store_, outcome.commit, node.recovered);
    if (!serial.ok()) {
      Fail(index, outcome.diagnostics, c.address, node.op,
           "could not record the result: " + serial.status().ToString());
      return false;
    }
    {
      MutexLock lock(mu_);
      done_ids_[index] = outcome.commit.put[0].id;
      values_[c.address] = std::move(outcome.commit.put[0].attributes);
      if (outcome.ok) {
        if (c.action == Action::kCreate) ++result_.summary.created;
        if (c.action == Action::kUpdate) ++result_.summary.updated;
        if (c.action == Action::kReplace) ++result_.summary.replaced;
      }
    }
    if (!outcome.checks_failed.empty()) {
      for (Diagnostic& d : outcome.checks_failed) FailCondition(index, std::move(d));
    } else if (!outcome.ok) {
      Fail(index, outcome.diagnostics, c.address, node.op, outcome.message);
    }
    return outcome.ok;
  }

  // Clears journal entry `seq` after a definite refusal (nothing happened).
  void FinishJournal(int64_t seq) { (void)store_.Commit(StateCommit{.journal_done = seq}); }

  const Plan& plan_;
  Provider& provider_;
  StateStore& store_;
  const ApplyOptions& options_;
  Clock& clock_;
  const std::string lineage_;
  const bool acyclic_;     // ApplyGraph::acyclic
  int64_t first_seq_ = 0;  // node i's journal sequence number is first_seq_ + i
  const ApplySender sender_;
  const int workers_;  // at least 1, at most one per node

  Mutex mu_;
  Mutex emit_mu_ ACQUIRED_AFTER(mu_);  // serialises the progress callback
  // The workers wait on cv_ without a deadline (Worker), so each change to
  // what their predicate reads, made under mu_, notifies it, or is made by a
  // worker that checks the predicate again before it waits:
  //   a wait settled, its slot freed (the Watch callback): one, which
  //     finishes that operation and, back at the wait, sends into the slot;
  //   nodes made ready (Complete): one per node;
  //   operations journaled, the batcher's slot freed (JournalAhead): all;
  //   Finished() or a stop (Complete, the stop callback): all; a worker
  //     that leaves wakes all;
  //   a slot freed by a send that did not wait, fewer journaled than the
  //     batcher's target: by a worker, which loops back to the predicate.
  CondVar cv_;
  // Built before the workers start; then a node's fields are the worker's
  // that holds it (or the recorder's), and what they share is the walk
  // and times_.
  std::vector<Node> nodes_;
  // What is ready, what is done, failed or skipped (engine/apply/apply_walk.h).
  ApplyWalk walk_ GUARDED_BY(mu_);
  // Journaled, not yet started; the chunk being journaled (apply_journal.h).
  JournalBatcher journal_ GUARDED_BY(mu_);
  // Sent and waiting for the provider's watcher, which no worker holds; and
  // waits that are over, for a worker to finish (apply_waits.h).
  WaitHandOff waits_ GUARDED_BY(mu_);
  // Outcomes waiting for the recorder thread, in the order they took
  // effect (apply_recorder.h).
  RecordQueue records_ GUARDED_BY(mu_);
  CondVar record_cv_;
  // When each node started, which long ones to report (apply_timing.h).
  OperationTimes times_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Value> values_ GUARDED_BY(mu_);
  std::map<size_t, std::string> done_ids_ GUARDED_BY(mu_);
  std::map<size_t, std::string> last_error_ GUARDED_BY(mu_);
  // An operation failed for a reason every request would meet (the API
  // unreachable, the token refused): Stopping() from then on.
  std::atomic<bool> api_failed_{false};
  // Also taken where no worker runs (before and after them), to keep the
  // accesses checked.
  ApplyResult result_ GUARDED_BY(mu_);
};

// Puts what the plan imports into `first` (the first commit, moves and
// forgets made): each object once, with its planned change's depends_on.
// An address the state already tracks with the same id is imported
// already (left as it is); with another id, the plan is not this state's:
// the reason, and nothing is committed.
std::string AddImports(const Plan& plan, const StateSnapshot& state, StateCommit& first) {
  if (plan.imports.empty()) return "";
  StateSnapshot after = state;
  for (const std::string& gone : first.remove) after.resources.erase(gone);
  for (const ResourceState& rs : first.put) after.resources[rs.address] = rs;
  std::map<std::string, const PlannedChange*> change_at;
  for (const PlannedChange& c : plan.changes) {
    if (!c.deposed) change_at[c.address] = &c;
  }
  for (const PlannedImport& im : plan.imports) {
    if (auto it = after.resources.find(im.address); it != after.resources.end()) {
      if (it->second.id == im.remote_id) continue;
      return "cannot import " + im.kind + " " + im.remote_id + " to " + im.address +
             ": the state tracks " + it->second.id + " there now";
    }
    ResourceState rs;
    rs.address = im.address;
    rs.kind = im.kind;
    rs.id = im.remote_id;
    rs.attributes = im.attributes;
    rs.attributes["id"] = im.remote_id;
    if (auto c = change_at.find(im.address); c != change_at.end()) {
      rs.depends_on = c->second->depends_on;
    }
    first.put.push_back(std::move(rs));
  }
  return "";
}

}  // namespace

void ApplySummary::AddRecovered(const ApplySummary& r) {
  created += r.created;
  updated += r.updated;
  replaced += r.replaced;
  deleted += r.deleted;
  failed += r.failed;
  skipped += r.skipped;
  held_back += r.held_back;
  recovered += r.done();
  interrupted = interrupted || r.interrupted;
}

Status CheckPlanIsCurrent(const Plan& plan, const StateSnapshot& state) {
  // Planned before the stack had a state (a plan creates none): it applies
  // to the state created since, as long as nothing was recorded in it.
  if (plan.lineage.empty() && plan.serial == 0) {
    if (state.serial == 0 && state.resources.empty()) return Status::Ok();
    return Status::FailedPrecondition(
        "the saved plan is stale: it was made before the stack had a state, and the state has "
        "been written since (serial " +
        std::to_string(state.serial) + "); run 'cairn plan' again");
  }
  if (plan.lineage != state.lineage) {
    return Status::FailedPrecondition("the saved plan was made for another state (lineage " +
                                      plan.lineage + ", this state is " + state.lineage + ")");
  }
  if (plan.serial != state.serial) {
    return Status::FailedPrecondition("the saved plan is stale: it was made at state serial " +
                                      std::to_string(plan.serial) +
                                      " but the state is now at serial " +
                                      std::to_string(state.serial) + "; run 'cairn plan' again");
  }
  return Status::Ok();
}

ApplyResult Apply(const Plan& plan, Provider& provider, StateStore& store,
                  const ApplyOptions& options) {
  auto state = store.Load();
  if (!state.ok()) {
    ApplyResult r;
    r.diagnostics.push_back({Severity::kError, "state_error", state.status().ToString(), "", {}});
    return r;
  }
  // Moves, forgets and imports first, in one commit: the changes name the
  // new addresses, hold nothing forgotten, and update what is imported
  // from the state. None of them sends a request.
  if (!plan.moves.empty() || !plan.forgets.empty() || !plan.imports.empty()) {
    StateCommit first = MoveCommit(*state, NetMoves(plan.moves));
    for (const PlannedForget& f : plan.forgets) {
      // A commit never puts and removes one address (commit_check.h).
      std::erase_if(first.put, [&](const ResourceState& rs) { return rs.address == f.address; });
      first.remove.push_back(f.address);
    }
    if (std::string why = AddImports(plan, *state, first); !why.empty()) {
      ApplyResult r;
      r.diagnostics.push_back(
          {Severity::kError, "state_error", why, "make the plan again ('cairn plan')", {}});
      return r;
    }
    auto moved = store.Commit(first);
    if (moved.ok()) state = store.Load();
    if (!moved.ok() || !state.ok()) {
      ApplyResult r;
      r.diagnostics.push_back({Severity::kError,
                               "state_error",
                               "could not move, forget or import addresses in the state: " +
                                   (moved.ok() ? state.status() : moved.status()).ToString(),
                               "",
                               {}});
      return r;
    }
  }
  ApplyRun run(plan, ApplyGraph::FromPlan(plan), provider, store, options, std::move(*state));
  if (run.Walk()) run.EvaluateOutputs();
  ApplyResult r = run.TakeResult();
  r.summary.interrupted = r.summary.interrupted || options.stop.stop_requested();
  r.summary.moved = static_cast<int>(plan.moves.size());
  r.summary.forgotten = static_cast<int>(plan.forgets.size());
  r.summary.imported = static_cast<int>(plan.imports.size());
  return r;
}

namespace {

// Describes journal entry `e` as the change it was part of, from what the
// entry and the state hold (the plan is gone): its address, its dependencies
// (from the context, which a damaged state file may fill with any JSON: only
// a list's strings are taken), the state's record as `before`, and, for the
// create of a create_before_destroy replace, the old object it deposes.
PlannedChange RecoveredChange(const JournalEntry& e, const StateSnapshot& state) {
  PlannedChange c;
  c.address = e.address;
  if (auto key = StateKey::Parse(e.address)) {
    c.parsed_address = key->resource;
    c.deposed = key->deposed;
  }
  c.kind = e.kind;
  c.action = e.action;
  c.remote_id = e.remote_id;
  auto recorded = state.resources.find(e.address);
  c.before = recorded != state.resources.end() ? recorded->second.attributes : Value::object();
  if (auto it = e.context.find("depends_on"); it != e.context.end() && it->is_array()) {
    for (const Value& d : *it) {
      if (d.is_string()) c.depends_on.push_back(d.get<std::string>());
    }
  }
  if (auto it = e.context.find("deposes"); c.action == Action::kCreate && it != e.context.end() &&
                                           it->is_string() && recorded != state.resources.end() &&
                                           recorded->second.id == it->get<std::string>()) {
    c.action = Action::kReplace;
    c.replace_order = ReplaceOrder::kCreateThenDelete;
    c.remote_id = recorded->second.id;
    c.prior_depends_on = recorded->second.depends_on;
  }
  return c;
}

}  // namespace

RecoveryResult RecoverJournal(Provider& provider, StateStore& store, const ApplyOptions& options) {
  RecoveryResult result;
  auto pending = store.PendingJournal();
  auto state = pending.ok() ? store.Load() : Result<StateSnapshot>(pending.status());
  if (!state.ok()) {
    result.diagnostics.push_back(
        {Severity::kError, "state_error", state.status().ToString(), "", {}});
    return result;
  }
  // Write-only values the journal does not keep (write_only.h), put back
  // from the manifests; an operation whose value they no longer give is
  // not sent, and stays in the journal.
  std::erase_if(*pending, [&](JournalEntry& e) {
    if (!HoldsWriteOnlyPlaceholder(e.body)) return false;
    std::vector<std::string> missing;
    std::string body = UnsealWriteOnly(e.body, options.write_only_values, missing);
    if (missing.empty()) {
      e.body = std::move(body);
      return false;
    }
    result.diagnostics.push_back(
        {Severity::kError,
         "write_only_unavailable",
         "the interrupted " + std::string(ActionName(e.action)) + " of " + e.address +
             " sent a write-only value that the journal does not keep, and the manifests no "
             "longer give it",
         "run cairn apply in the stack's directory with the same manifests and ephemeral "
         "variables as the interrupted run; the operation stays in the journal until then",
         {}});
    return true;
  });
  if (pending->empty()) return result;
  Plan described;
  for (const JournalEntry& e : *pending) described.changes.push_back(RecoveredChange(e, *state));
  ApplyRun run(described, ApplyGraph::FromJournal(described.changes, std::move(*pending)), provider,
               store, options, std::move(*state));
  const bool walked = run.Walk();
  ApplyResult r = run.TakeResult();
  // The run's last write, as the outputs are an apply's: the deferred
  // commits made durable.
  if (Status st = walked ? store.Sync() : Status::Ok(); !st.ok()) {
    r.diagnostics.push_back(
        {Severity::kError, "state_error", "could not sync the state: " + st.ToString(), "", {}});
  }
  const ApplySummary& s = r.summary;
  result.summary = s;
  result.recovered = s.created + s.updated + s.replaced + s.deleted;
  result.interrupted = s.interrupted;
  result.diagnostics = std::move(r.diagnostics);
  return result;
}

}  // namespace cairn
