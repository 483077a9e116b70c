#include "server/lifecycle.h"

#include <spdlog/spdlog.h>

#include "server/metrics.h"

namespace cairn::server {
namespace {

// The longest lifecycle path (queued, provisioning, retrying, provisioning,
// delayed, provisioning, running, reconciling, running) has 8 steps.
constexpr int kMaxStepsPerWrite = 8;

bool TakeFate(Record* r, char c) {
  size_t pos = r->fate.find(c);
  if (pos == std::string::npos) return false;
  r->fate.erase(pos, 1);
  return true;
}

}  // namespace

bool AdvanceLifecycle(Record* r, int64_t now_ms, int64_t delay_ms,
                      const std::function<ProvisionFate()>& pick_fate,
                      const std::function<Result<std::string>(const std::string&)>& allocate_ipv4) {
  const int64_t next = now_ms + delay_ms;
  const std::string& s = r->status;
  if (s == "queued") {
    ProvisionFate f = pick_fate();
    r->fate.clear();
    if (f.fail) r->fate += 'f';
    if (f.retry) r->fate += 'r';
    if (f.delay) r->fate += 'd';
    if (f.reconcile) r->fate += 'c';
    r->status = "provisioning";
    r->next_step_ms = next;
  } else if (s == "provisioning") {
    if (TakeFate(r, 'f')) {
      r->status = "failed";
      r->fate.clear();
      r->next_step_ms = 0;
    } else if (TakeFate(r, 'r')) {
      r->status = "retrying";
      r->next_step_ms = next;
    } else if (TakeFate(r, 'd')) {
      r->status = "delayed";
      r->next_step_ms = next;
    } else {
      if (r->kind == "instance" && !r->attrs.contains("ipv4")) {
        auto ip = allocate_ipv4(r->attrs.value("region", ""));
        if (!ip.ok()) {
          r->status = "failed";
          r->fate.clear();
          r->next_step_ms = 0;
          return true;
        }
        r->attrs["ipv4"] = *ip;
      }
      r->status = "running";
      r->next_step_ms = r->fate.find('c') != std::string::npos ? next : 0;
    }
  } else if (s == "retrying" || s == "delayed") {
    r->status = "provisioning";
    r->next_step_ms = next;
  } else if (s == "running") {
    if (!TakeFate(r, 'c')) {
      r->next_step_ms = 0;
      return false;
    }
    r->status = "reconciling";
    r->next_step_ms = next;
  } else if (s == "reconciling" || s == "starting" || s == "rebooting") {
    r->status = "running";
    r->next_step_ms = 0;
  } else if (s == "stopping") {
    r->status = "stopped";
    r->next_step_ms = 0;
  } else if (s == "deleting") {
    r->status = "deleted";
    r->next_step_ms = 0;
  } else {
    r->next_step_ms = 0;
    return false;
  }
  return true;
}

std::vector<std::string> AdvanceDue(
    Record* r, int64_t now_ms, int64_t delay_ms, const std::function<ProvisionFate()>& pick_fate,
    const std::function<Result<std::string>(const std::string&)>& allocate_ipv4) {
  std::vector<std::string> entered;
  for (int steps = 0; steps < kMaxStepsPerWrite; ++steps) {
    if (!AdvanceLifecycle(r, now_ms, delay_ms, pick_fate, allocate_ipv4)) break;
    entered.push_back(r->status);
    if (r->next_step_ms == 0 || r->next_step_ms > now_ms) break;
  }
  return entered;
}

LifecycleWorker::LifecycleWorker(ApiStore* store, FaultInjector* faults, Metrics* metrics,
                                 std::chrono::milliseconds step_delay,
                                 std::chrono::milliseconds retention)
    : store_(store),
      faults_(faults),
      metrics_(metrics),
      delay_(step_delay),
      retention_(retention) {}

LifecycleWorker::~LifecycleWorker() { Stop(); }

void LifecycleWorker::Start() {
  // Steps scheduled by an earlier run with a longer delay follow this run's delay.
  int64_t latest = NowMs() + delay_.count();
  store_->Submit([latest](WriteTxn& txn) { return txn.CapSchedule(latest).ok(); },
                 [](const Status&) {});
  thread_ = std::thread([this] { Loop(); });
}

void LifecycleWorker::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
}

void LifecycleWorker::Wake() {
  MutexLock lock(mu_);
  woken_ = true;
  cv_.NotifyAll();
}

size_t LifecycleWorker::RunDue() {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  size_t moved = 0;
  std::vector<std::string> entered;
  int64_t delay_ms = delay_.count();
  store_->Submit(
      [&](WriteTxn& txn) {
        auto due = txn.Due(NowMs(), 512);
        if (!due.ok()) {
          spdlog::error("lifecycle: {}", due.status().message());
          return false;
        }
        for (Record& r : *due) {
          auto statuses = AdvanceDue(
              &r, NowMs(), delay_ms, [&] { return faults_->PickProvisionFate(); },
              [&](const std::string& region) { return txn.AllocateIpv4(region); });
          entered.insert(entered.end(), statuses.begin(), statuses.end());
          if (Status st = txn.Update(r); !st.ok()) {
            spdlog::error("lifecycle: {}", st.message());
            return false;
          }
        }
        moved = due->size();
        return true;
      },
      [&](const Status& st) {
        std::lock_guard<std::mutex> lock(m);
        if (!st.ok()) moved = 0, entered.clear();
        done = true;
        cv.notify_one();
      });
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return done; });
  for (const auto& s : entered) metrics_->CountTransition(s);
  return moved;
}

void LifecycleWorker::Purge() {
  int64_t cutoff = NowMs() - retention_.count();
  store_->Submit(
      [cutoff](WriteTxn& txn) {
        Status st = txn.PurgeResponses(cutoff);
        if (!st.ok()) spdlog::error("idempotency purge: {}", st.message());
        return st.ok();
      },
      [](const Status&) {});
}

void LifecycleWorker::Loop() {
  auto last_purge = std::chrono::steady_clock::now() - std::chrono::hours(1);
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stop_) return;
      woken_ = false;
    }
    if (std::chrono::steady_clock::now() - last_purge > std::chrono::minutes(1)) {
      Purge();
      last_purge = std::chrono::steady_clock::now();
    }
    auto next = store_->NextDueMs();
    int64_t now = NowMs();
    // Other servers sharing the store schedule steps this one is not told
    // of (and this one finishes those of a server that died): look again
    // at least once a second.
    const int64_t longest = store_->shared() ? 1'000 : 60'000;
    int64_t wait_ms = longest;
    if (next.ok() && *next > 0) {
      if (*next <= now) {
        if (RunDue() > 0) continue;
        wait_ms = 50;  // due but nothing moved (store trouble): back off briefly
      } else {
        wait_ms = std::min<int64_t>(*next - now, longest);
      }
    } else if (!next.ok()) {
      spdlog::error("lifecycle: {}", next.status().message());
      wait_ms = 1000;
    }
    MutexLock lock(mu_);
    cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms),
                  [&]() REQUIRES(mu_) { return stop_ || woken_; });
  }
}

}  // namespace cairn::server
