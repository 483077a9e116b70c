// The lifecycle worker: stands in for the provisioning system. It moves
// records through their raw statuses, one step per --provision-delay (with
// --provision-delay 0, all of a record's steps at once, in one write; a
// create takes them in its own write, see api.cc):
//
//   queued -> provisioning -> running            (instances get an ipv4)
//   provisioning -> retrying -> provisioning     (fault: provision_retrying)
//   provisioning -> delayed -> provisioning      (fault: provision_delayed)
//   provisioning -> failed                       (fault: provision_failed)
//   running -> reconciling -> running            (fault: reconcile)
//   stopping -> stopped, starting -> running, rebooting -> running
//   deleting -> deleted
//
// A record's pending step is persisted (resources.next_step_ms), so after a
// restart the worker resumes every unfinished transition. The path a run
// takes is decided once, when it leaves queued, and stored in
// resources.fate ("f" fail, "r" retry, "d" delay, "c" reconcile). The
// worker also purges idempotency records older than the retention.
// Thread-safe; steps run as mutations on the store's writer thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/api_store.h"
#include "server/faults.h"

namespace cairn::server {

class Metrics;

// One lifecycle step of `r` at `now_ms` (pure apart from the callbacks).
// Returns false when the record had no step to take. `pick_fate` is called
// when a run leaves queued; `allocate_ipv4` when an instance first runs.
bool AdvanceLifecycle(Record* r, int64_t now_ms, int64_t delay_ms,
                      const std::function<ProvisionFate()>& pick_fate,
                      const std::function<Result<std::string>(const std::string&)>& allocate_ipv4);

// Every step of `r` due at `now_ms`: one, or with a zero delay all of them
// up to a settled status (the worker then takes them in one write). Returns
// the raw statuses entered, in order; empty when nothing was due.
std::vector<std::string> AdvanceDue(
    Record* r, int64_t now_ms, int64_t delay_ms, const std::function<ProvisionFate()>& pick_fate,
    const std::function<Result<std::string>(const std::string&)>& allocate_ipv4);

class LifecycleWorker {
 public:
  LifecycleWorker(ApiStore* store, FaultInjector* faults, Metrics* metrics,
                  std::chrono::milliseconds step_delay, std::chrono::milliseconds retention);
  ~LifecycleWorker();
  void Start();
  void Stop();
  // Something was committed: re-check what is due.
  void Wake();

 private:
  void Loop();
  // Runs one batch of due steps; returns how many records moved.
  size_t RunDue();
  void Purge();

  ApiStore* store_;
  FaultInjector* faults_;
  Metrics* metrics_;
  const std::chrono::milliseconds delay_, retention_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool woken_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cairn::server
