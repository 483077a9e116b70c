#include "engine/apply/apply.h"

#include <openssl/sha.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <set>
#include <stop_token>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/apply/apply_graph.h"
#include "engine/apply/apply_walk.h"
#include "engine/apply/object_compatible.h"
#include "engine/crash_point.h"
#include "engine/graph/topological_order.h"
#include "engine/manifest/expr.h"
#include "engine/plan/conditions.h"
#include "engine/state/moves.h"

namespace cairn {
namespace {

std::string ShortHash(const std::string& s) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

// A network failure or a deadline leaves the outcome of a sent mutation
// unknown: the journal entry must stay for recovery. Anything else was a
// definite answer.
bool OutcomeUnknown(const Status& st) {
  switch (st.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
    case StatusCode::kIOError:
      return true;
    default:
      return false;
  }
}

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

// Why a resource whose wait saw it fail must be replaced, for the state
// ("" when it did not fail: a wait that timed out leaves a resource that may
// still become ready).
std::string TaintOf(bool create, const WaitResponse& wait) {
  if (wait.failed_reason.empty()) return "";
  return (create ? "provisioning failed: " : "failed after an update: ") + wait.failed_reason;
}

// The state key of the object a create_before_destroy replace of `c`
// deposes.
std::string DeposedKey(const PlannedChange& c) {
  return StateKey{c.parsed_address, true}.ToString();
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
  // Set by the provider's watcher when the wait is over.
  std::optional<WaitResponse> wait;
  std::vector<Diagnostic> diagnostics;  // gathered while sending, for the outcome
  // Recovered only: how the interrupted operation was completed, for its
  // kRecovered event.
  std::string how;
  // Set by AfterWait when a create or update has taken effect: what the
  // recorder thread commits to the state before the node completes.
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

// When a node's operation started, and when it was last reported as still
// running (ApplyRun::timing_, under its mu_).
struct NodeTiming {
  Clock::time_point started;
  std::chrono::milliseconds last_report{0};
};

// Runs an ApplyGraph: the operations of a plan, or those an interrupted run
// left in the journal (the graph says which, node by node; the run has no
// mode). The same send, wait and commit path, the same workers and
// watchers for both. Thread-safe by construction: shared state is guarded
// by mu_.
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
        walk_(graph) {
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
      timing_.emplace_back();
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
        if (nodes_[i].recovered) journaled_.push_back(i);
      }
    }
    workers_ = std::max(1, std::min<int>(options_.parallelism, static_cast<int>(nodes_.size())));
    // A worker that starts an operation journals the next ones ahead when
    // fewer than half the workers' worth are journaled, up to one and a half
    // times the workers; with one worker, one at a time, just before it runs.
    low_water_ = static_cast<size_t>(workers_) / 2;
    journal_target_ = static_cast<size_t>(workers_) + low_water_;
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
        workers_gone_ = true;
      }
      record_cv_.NotifyOne();
      recorder.join();  // after recording what the workers left, even when stopped
    }                   // ~jthread: the monitor is asked to stop, wakes at once and is joined
    // Journaled ahead but never sent (the run was stopped): nothing happened.
    // A recovered entry stays: the interrupted run may have sent it. The
    // workers are gone: holding mu_ over the commits delays no one.
    MutexLock lock(mu_);
    for (size_t index : journaled_) {
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
  // Each worker finishes operations whose wait is over (settled_, first:
  // that frees their dependents), sends journaled ones while fewer than
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
  // journal (journal_target_ already journaled) waits for a wait to end.
  void Worker() {
    const size_t max_pending = static_cast<size_t>(std::max(1, options_.max_pending));
    auto may_send = [&]() REQUIRES(mu_) {
      return !journaled_.empty() && static_cast<size_t>(pending_) < max_pending;
    };
    for (;;) {
      std::optional<size_t> index;    // to send
      std::optional<size_t> settled;  // to finish
      std::vector<size_t> chunk;
      {
        MutexLock lock(mu_);
        cv_.Wait(mu_, [&]() REQUIRES(mu_) {
          // Stopping, nothing new starts, but what was sent is finished.
          return !settled_.empty() || Finished() || (Stopping() && pending_ == 0) ||
                 (!Stopping() && (may_send() || MayJournal()));
        });
        if (!settled_.empty()) {
          settled = settled_.front();
          settled_.pop_front();
          ++running_;
        } else if (Finished() || Stopping()) {
          cv_.NotifyAll();
          return;
        } else {
          if (may_send()) {
            index = journaled_.front();
            journaled_.pop_front();
            walk_.Start(*index);
            timing_[*index].started = clock_.Now();
            ++running_;
            ++pending_;  // reserved before sending, so max_pending holds
          }
          // Nothing to send, or few journaled operations left for the
          // others. MayJournal guarantees a chunk that is not empty: the
          // flag set here is cleared only by the JournalAhead of that chunk.
          if (MayJournal() && (!index || journaled_.size() < low_water_)) {
            while (journaled_.size() + chunk.size() < journal_target_ && walk_.has_ready()) {
              chunk.push_back(walk_.TakeReady());
            }
            journaling_ = true;
          }
        }
      }
      if (!chunk.empty()) JournalAhead(chunk);
      if (settled) {
        bool ok = AfterWait(nodes_[*settled]);
        FinishNode(*settled, ok);
        continue;
      }
      if (!index) continue;
      Node& node = nodes_[*index];
      if (!node.recovered) {
        Emit({ProgressEvent::Phase::kStart, node.change->address, node.op, node.change->remote_id});
      }
      Sent sent = Send(node);
      if (sent == Sent::kWatching) {
        MutexLock lock(mu_);
        --running_;       // pending_ holds it now
        cv_.NotifyOne();  // a slot is free
        continue;
      }
      {
        MutexLock lock(mu_);
        --pending_;  // it did not wait after all
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
      if (node.outcome->commit.durability == Durability::kDeferred &&
          to_record_.size() < static_cast<size_t>(workers_)) {
        --running_;
        ++recording_;
        to_record_.push_back(index);
        record_cv_.NotifyOne();
        return;
      }
      lock.Unlock();
      ok = Record(node);
      lock.Lock();
    }
    --running_;
    EmitAfter(lock, Complete(index, ok));
  }

  // Commits the outcomes of the creates and updates that took effect, in
  // the order they did, and completes their nodes (which makes their
  // dependents ready). A worker hands its outcome over and goes on to the
  // next operation instead of waiting for the state's write queue. Leaves
  // once the workers have and nothing is left to record.
  void Recorder() {
    MutexUnlockableLock lock(mu_);
    for (;;) {
      // No deadline: only the recorder waits on record_cv_, and both of its
      // conditions are set under mu_ and notified (FinishNode, Run).
      record_cv_.Wait(mu_, [&]() REQUIRES(mu_) { return !to_record_.empty() || workers_gone_; });
      if (to_record_.empty()) return;
      size_t index = to_record_.front();
      to_record_.pop_front();
      lock.Unlock();
      bool ok = Record(nodes_[index]);
      lock.Lock();
      --recording_;
      EmitAfter(lock, Complete(index, ok));
      lock.Lock();
    }
  }

  // Ready operations may be journaled ahead now: none
  // is being journaled, and fewer than journal_target_ are journaled. The
  // bound matters when max_pending operations wait: nothing can be sent
  // then, and a worker woken to journal with the queue full had nothing to
  // journal, yet set journaling_, which only a JournalAhead clears: no
  // operation was ever journaled again, and the run hung once the
  // journaled ones were sent (an apply of 1 network + 300 instances with
  // --max-pending 50 stopped after 1 + 50 + 15 commits).
  bool MayJournal() const REQUIRES(mu_) {
    return !journaling_ && walk_.has_ready() && journaled_.size() < journal_target_;
  }

  // Nothing left to run, journal or record: the workers may go.
  bool Finished() const REQUIRES(mu_) {
    return !walk_.has_ready() && journaled_.empty() && !journaling_ && running_ == 0 &&
           recording_ == 0 && pending_ == 0 && settled_.empty();
  }

  // Records the end of node `index` (ran, or failed before it could run),
  // makes its dependents ready or skips them and wakes the workers this
  // concerns; returns what to report, for EmitAfter (the caller's, which
  // lets go of mu_ only once the callback is serialised).
  std::vector<ProgressEvent> Complete(size_t index, bool ok) REQUIRES(mu_) {
    Node& node = nodes_[index];
    auto elapsed = walk_.state(index) == ApplyWalk::State::kRunning
                       ? std::chrono::duration_cast<std::chrono::milliseconds>(
                             clock_.Now() - timing_[index].started)
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
    Status st = store_.JournalBeginAll(entries);
    if (st.ok()) {
      for (size_t i = 0; i < built.size(); ++i) CrashPoint("apply.journaled");
    }
    MutexUnlockableLock lock(mu_);
    journaling_ = false;
    for (size_t index : built) {
      if (st.ok()) {
        journaled_.push_back(index);
      } else {
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
      for (size_t i = 0; i < nodes_.size(); ++i) {
        const Node& n = nodes_[i];
        NodeTiming& p = timing_[i];
        if (walk_.state(i) != ApplyWalk::State::kRunning) continue;
        auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.started);
        if (elapsed - p.last_report >= options_.progress_interval) {
          p.last_report = elapsed;
          events.push_back(
              {ProgressEvent::Phase::kStillRunning, n.change->address, n.op, "", elapsed});
        }
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

  std::chrono::seconds Timeout(Action op) const {
    return op == Action::kCreate   ? options_.create_timeout
           : op == Action::kUpdate ? options_.update_timeout
                                   : options_.delete_timeout;
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
    JournalEntry& entry = node.entry;
    entry.seq = first_seq_ + static_cast<int64_t>(index);
    entry.address = node.deposed ? DeposedKey(c) : c.address;
    entry.action = node.op;
    entry.kind = c.kind;
    entry.remote_id = prep.id;
    entry.method = prepared->method;
    entry.path = prepared->path;
    entry.body = prepared->body;
    entry.idempotency_key = IdempotencyKey(lineage_, entry.seq, entry.action, c.address);
    entry.started_at = clock_.UnixSeconds();
    entry.context = {{"depends_on", c.depends_on}};
    // The object a create_before_destroy replace deposes: recovery records
    // it as deposed, as this run would, rather than losing track of it.
    if (node.op == Action::kCreate && c.CreatesBeforeDeleting()) {
      entry.context["deposes"] = c.remote_id;
    }
    node.prepared = std::move(*prepared);
    return true;
  }

  // Sends the node's journaled request. A refusal is recorded here (kFailed);
  // a delete of something already gone is committed at once (kDone);
  // anything else is left to the provider's watcher until it has taken
  // effect (kWatching): AfterWait finishes it, on whichever worker takes it
  // from settled_. The worker meanwhile sends the next operation. An
  // interrupted create of a kind the API cannot deduplicate is first looked
  // for by name (FindOwnCreate), and adopted instead of sent when found.
  enum class Sent { kFailed, kDone, kWatching };
  Sent Send(Node& node) EXCLUDES(mu_) {
    const PlannedChange& c = *node.change;
    size_t index = &node - nodes_.data();
    const JournalEntry& entry = node.entry;
    const auto& prepared = node.prepared;
    std::stop_token none;  // in-flight operations always finish
    const char* sent_point = node.recovered ? "recover.sent" : "apply.sent";
    StateCommit refused;
    refused.journal_done = entry.seq;
    WaitRequest wait{c.kind, "", WaitTarget::kReady, Timeout(node.op)};
    if (node.op == Action::kDelete) {
      node.how = "delete completed";
      auto resp = provider_.Delete({*prepared, entry.idempotency_key}, none);
      CrashPoint(sent_point);
      if (!resp.status.ok()) {
        if (OutcomeUnknown(resp.status)) refused.journal_done.reset();
        Fail(index, resp.diagnostics, c.address, node.op, resp.status.message());
        FinishJournal(refused);
        return Sent::kFailed;
      }
      Append(node.diagnostics, resp.diagnostics);
      if (resp.already_gone) return CommitDelete(node) ? Sent::kDone : Sent::kFailed;
      wait.id = c.remote_id;
      wait.target = WaitTarget::kDeleted;
    } else {
      Status status;
      std::vector<Diagnostic> diags;
      node.how = "re-sent with its original idempotency key";
      if (node.op == Action::kCreate && node.recovered) {
        node.sent = FindOwnCreate(node);
        if (node.sent) node.how = "found by name";
      }
      if (node.sent) {
        // Adopted: nothing sent.
      } else if (node.op == Action::kCreate) {
        auto resp = provider_.Create({*prepared, entry.idempotency_key}, none);
        CrashPoint(sent_point);
        status = resp.status.ok() && !resp.resource
                     ? Status::Internal("the API answered without a resource")
                     : resp.status;
        diags = std::move(resp.diagnostics);
        node.sent = std::move(resp.resource);
        if (node.sent) wait.just_created = node.sent;
        if (resp.replayed) node.how = "adopted the API's replayed response";
      } else {
        auto resp = provider_.Update({*prepared, entry.idempotency_key}, none);
        CrashPoint(sent_point);
        status = resp.status;
        diags = std::move(resp.diagnostics);
        node.sent = resp.resource ? resp.resource : RemoteResource{c.kind, c.remote_id, c.before};
      }
      if (!status.ok()) {
        if (OutcomeUnknown(status)) refused.journal_done.reset();
        Fail(index, diags, c.address, node.op, status.message());
        FinishJournal(refused);
        return Sent::kFailed;
      }
      Append(node.diagnostics, diags);
      wait.id = node.sent->id;
    }
    if (!node.recovered) {
      Clock::time_point started;
      {
        MutexLock lock(mu_);
        started = timing_[index].started;
      }
      Emit({ProgressEvent::Phase::kWaiting, c.address, node.op,
            node.op == Action::kDelete ? c.remote_id : node.sent->id,
            std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - started),
            node.op == Action::kDelete ? "waiting until deleted" : "waiting until ready"});
    }
    // The provider calls this exactly once, by the wait's own deadline
    // (Provider::Watch; the watchers end every wait at it).
    provider_.Watch(wait, [this, index](WaitResponse r) {
      MutexLock lock(mu_);
      nodes_[index].wait = std::move(r);
      --pending_;
      settled_.push_back(index);
      cv_.NotifyOne();
    });
    return Sent::kWatching;
  }

  // Recovery of a create of a kind the API cannot deduplicate
  // (find_by_name_kinds): the object of the journaled request's name, if
  // there is exactly one and it is what the request asked for. Another
  // stack or a person may use the same name: an object that differs is not
  // ours. A damaged state file may journal any JSON as the body.
  std::optional<RemoteResource> FindOwnCreate(const Node& node) {
    if (!options_.find_by_name_kinds.count(node.change->kind)) return std::nullopt;
    auto parsed = ParseJson(node.entry.body);
    Value body = parsed.ok() ? std::move(*parsed) : Value();
    std::string name = StringMember(body, "name");
    if (name.empty()) return std::nullopt;
    auto found = provider_.FindByName(node.change->kind, name, std::stop_token());
    if (!found.status.ok()) return std::nullopt;
    return SoleResultOf(std::move(found.resources), body);
  }

  // The rest of an operation once its wait is over: a delete is committed
  // here; a create's or update's outcome is left in node.outcome for Record.
  bool AfterWait(Node& node) EXCLUDES(mu_) {
    const PlannedChange& c = *node.change;
    size_t index = &node - nodes_.data();
    WaitResponse wait = std::move(*node.wait);
    node.wait.reset();
    Append(node.diagnostics, wait.diagnostics);
    if (node.op == Action::kDelete) {
      if (!wait.status.ok()) {
        // The API accepted the delete; the resource is on its way out. Keep
        // the journal so the next run confirms it.
        Fail(index, node.diagnostics, c.address, node.op, wait.status.message());
        return false;
      }
      return CommitDelete(node);
    }
    CrashPoint(node.recovered ? "recover.ready" : "apply.ready");
    std::optional<RemoteResource> remote = wait.resource ? std::move(wait.resource) : node.sent;
    StateCommit commit;
    commit.journal_done = node.entry.seq;
    // The resource exists whatever the wait said: record it.
    ResourceState rs;
    rs.address = c.address;
    rs.kind = c.kind;
    rs.id = remote->id;
    rs.attributes = std::move(remote->attributes);
    rs.attributes["id"] = rs.id;
    rs.depends_on = c.depends_on;
    rs.tainted = TaintOf(node.op == Action::kCreate, wait);
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
    // Deferred where the API replays by key: until a later write (at most
    // a second away, see Monitor) syncs it, the pending journal entry stands
    // for it; a machine crash in between leaves the entry, which the next
    // run re-sends with its key, and the API answers with this result. An
    // API that cannot deduplicate creates could only be searched by name,
    // so those results are synced at once.
    commit.durability =
        options_.find_by_name_kinds.count(c.kind) ? Durability::kImmediate : Durability::kDeferred;
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

  // Records a delete that took effect (or found nothing to delete).
  bool CommitDelete(Node& node) EXCLUDES(mu_) {
    const PlannedChange& c = *node.change;
    size_t index = &node - nodes_.data();
    StateCommit commit;
    commit.journal_done = node.entry.seq;
    if (node.deposed) {
      commit.remove.push_back(DeposedKey(c));
    } else if (c.action == Action::kDelete || c.action == Action::kReplace) {
      commit.remove.push_back(c.address);
    }
    auto serial = store_.Commit(commit);
    if (!serial.ok()) {
      Fail(index, {}, c.address, node.op,
           "could not record the delete: " + serial.status().ToString());
      return false;
    }
    CrashPoint(node.recovered ? "recover.committed" : "apply.committed");
    MutexLock lock(mu_);
    if (!node.deposed) values_.erase(c.address);
    if (c.action == Action::kDelete) ++result_.summary.deleted;
    done_ids_[index] = c.remote_id;
    return true;
  }

  // Commits a create's or update's outcome (left in node.outcome by
  // AfterWait) and records the new values for the nodes that refer to it.
  // False when the outcome was a failure or cannot be recorded.
  bool Record(Node& node) EXCLUDES(mu_) {
    const PlannedChange& c = *node.change;
    size_t index = &node - nodes_.data();
    Node::Outcome outcome = std::move(*node.outcome);
    node.outcome.reset();
    auto serial = store_.Commit(outcome.commit);
    if (!serial.ok()) {
      Fail(index, outcome.diagnostics, c.address, node.op,
           "could not record the result: " + serial.status().ToString());
      return false;
    }
    CrashPoint(node.recovered ? "recover.committed" : "apply.committed");
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

  // Clears a journal entry after a definite refusal (nothing happened).
  void FinishJournal(const StateCommit& commit) {
    if (commit.journal_done) (void)store_.Commit(StateCommit{.journal_done = commit.journal_done});
  }

  const Plan& plan_;
  Provider& provider_;
  StateStore& store_;
  const ApplyOptions& options_;
  Clock& clock_;
  const std::string lineage_;
  const bool acyclic_;     // ApplyGraph::acyclic
  int64_t first_seq_ = 0;  // node i's journal sequence number is first_seq_ + i

  Mutex mu_;
  Mutex emit_mu_ ACQUIRED_AFTER(mu_);  // serialises the progress callback
  // The workers wait on cv_ without a deadline (Worker), so each change to
  // what their predicate reads, made under mu_, notifies it, or is made by a
  // worker that checks the predicate again before it waits:
  //   settled_ pushed, a pending slot freed (the Watch callback): one, which
  //     finishes that operation and, back at the wait, sends into the slot;
  //   nodes made ready (Complete): one per node;
  //   operations journaled, journaling_ cleared (JournalAhead): all;
  //   Finished() or a stop (Complete, the stop callback): all; a worker
  //     that leaves wakes all;
  //   a slot freed by a send that did not wait, journaled_ shrunk below
  //     journal_target_: by a worker, which loops back to the predicate.
  CondVar cv_;
  // Built before the workers start; then a node's fields are the worker's
  // that holds it (or the recorder's), and what they share is the walk
  // and timing_.
  std::vector<Node> nodes_;
  // What is ready, what is done, failed or skipped (engine/apply/apply_walk.h).
  ApplyWalk walk_ GUARDED_BY(mu_);
  std::vector<NodeTiming> timing_ GUARDED_BY(mu_);  // nodes_[i]'s is timing_[i]
  int running_ GUARDED_BY(mu_) = 0;
  // Journaled, not yet started, in journal order.
  std::deque<size_t> journaled_ GUARDED_BY(mu_);
  bool journaling_ GUARDED_BY(mu_) = false;  // a JournalAhead is writing
  // Sent (or being sent) and waiting for the provider's watcher, which no
  // worker holds; and waits that are over, for a worker to finish
  // (AfterWait), in order.
  int pending_ GUARDED_BY(mu_) = 0;
  std::deque<size_t> settled_ GUARDED_BY(mu_);
  // Nodes whose outcome waits for the recorder, in the order they took effect.
  std::deque<size_t> to_record_ GUARDED_BY(mu_);
  int recording_ GUARDED_BY(mu_) = 0;  // handed over, not yet complete
  bool workers_gone_ GUARDED_BY(mu_) = false;
  CondVar record_cv_;
  size_t low_water_ = 0, journal_target_ = 1;  // set before the workers start
  int workers_ = 1;                            // set before the workers start
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

std::string IdempotencyKey(const std::string& lineage, int64_t seq, Action action,
                           const std::string& address) {
  return "cairn-" + lineage + "-" + std::to_string(seq) + "-" + ActionName(action) + "-" +
         ShortHash(address);
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
  // Moves and forgets first, in one commit: the changes name the new
  // addresses, and hold nothing forgotten. Forgetting sends no request.
  if (!plan.moves.empty() || !plan.forgets.empty()) {
    StateCommit first = MoveCommit(*state, NetMoves(plan.moves));
    for (const PlannedForget& f : plan.forgets) {
      // A commit never puts and removes one address (commit_check.h).
      std::erase_if(first.put, [&](const ResourceState& rs) { return rs.address == f.address; });
      first.remove.push_back(f.address);
    }
    auto moved = store.Commit(first);
    if (moved.ok()) state = store.Load();
    if (!moved.ok() || !state.ok()) {
      ApplyResult r;
      r.diagnostics.push_back({Severity::kError,
                               "state_error",
                               "could not move or forget addresses in the state: " +
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
