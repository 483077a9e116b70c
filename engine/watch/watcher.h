// The watcher behind `cairn watch`: its stacks, each on its own schedule
// (the interval, jittered so that stacks started together spread out),
// run by one pool of threads, never two runs of one stack at once. Before
// each run it claims the stack (WatchTarget::Claim: one watcher per stack
// among several processes); a stack another watcher holds is in standby
// and claimed again at each interval, so a watcher that dies is replaced
// within one. It keeps each stack's latest run, turns the difference
// between runs into events (watch_status.h), and gives the status document
// of every stack. What a run does is the target's business.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/value.h"
#include "engine/watch/watch_status.h"

namespace cairn {

// One stack as the watcher drives it (the CLI's is a loaded stack with its
// state and the API; tests use fakes).
class WatchTarget {
 public:
  virtual ~WatchTarget() = default;
  // Claims the stack for this watcher: true while it holds it (taken now or
  // held already), false with `holder` naming who does when another does.
  virtual Result<bool> Claim(std::string* holder) = 0;
  // One run (WatchRun, and remediation when asked for); a run that could
  // not be made is a record with `error` set. Returns soon once `stop` is
  // requested.
  virtual StackRunRecord Run(std::stop_token stop) = 0;
};

struct WatchedStack {
  WatchedStackInfo info;
  std::chrono::milliseconds interval{300'000};
  bool remediate = false;  // drift-only remediation (for the status document)
  std::unique_ptr<WatchTarget> target;
};

struct WatcherOptions {
  int threads = 4;
  // Each interval is drawn from [1 - jitter, 1 + jitter] times the stack's.
  double jitter = 0.1;
  // The first run of a stack starts within this of Start (drawn at random,
  // so that many stacks do not all start at once).
  std::chrono::milliseconds first_run_spread{2'000};
  // Called after each run, from the pool's threads, one call at a time:
  // the events it caused (possibly none), then the run itself.
  std::function<void(const Value& event)> on_event;
  std::function<void(const WatchedStackInfo& stack, const StackRunRecord& run)> on_run;
  // Called when a claim finds another holder or fails (role "standby", or
  // the error), one call at a time.
  std::function<void(const WatchedStackInfo& stack, bool active)> on_role;
  // For the status document.
  std::string holder;
  bool remediate = false;
};

class Watcher {
 public:
  Watcher(std::vector<WatchedStack> stacks, WatcherOptions options);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  void Start() EXCLUDES(mu_);
  // Starts no new run, waits for those running to finish (each is asked to
  // stop soon), and returns. Start may be called again.
  void Stop() EXCLUDES(mu_);
  // Stop, then the watcher's stacks replaced with `stacks` (SIGHUP: the
  // manifests loaded again), then Start. A stack of the same name keeps its
  // latest runs (and so its status and events carry on).
  void Replace(std::vector<WatchedStack> stacks) EXCLUDES(mu_);

  // The status document (docs/watch.md): {"format_version", "generated_at",
  // "watcher", "stacks": [...]}.
  Value StatusJson() const EXCLUDES(mu_);
  // Runs completed so far, of every stack (tests, benchmarks).
  int64_t runs_completed() const EXCLUDES(mu_);
  size_t stack_count() const EXCLUDES(mu_);

 private:
  struct Slot;
  void Work(std::stop_token stop) EXCLUDES(mu_);
  void Schedule(Slot& slot, int64_t from_ms, bool first) REQUIRES(mu_);

  const WatcherOptions options_;
  const int64_t started_ms_;
  mutable Mutex mu_;
  CondVar cv_;
  // A slot's fields are the mutex's, but for its stack's target, which
  // only the worker running it (slot.running) calls.
  std::vector<std::unique_ptr<Slot>> slots_ GUARDED_BY(mu_);
  std::vector<std::jthread> workers_ GUARDED_BY(mu_);
  std::stop_source stop_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  int64_t runs_completed_ GUARDED_BY(mu_) = 0;
  uint64_t wakes_ GUARDED_BY(mu_) = 0;  // counts the ends of runs, for the waiting workers
};

// Unix time now, in milliseconds.
int64_t WatchNowMs();

}  // namespace cairn
