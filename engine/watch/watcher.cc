#include "engine/watch/watcher.h"

#include <algorithm>
#include <map>

namespace cairn {

struct Watcher::Slot {
  WatchedStack stack;
  int64_t due_ms = 0;
  bool running = false;
  bool claimed = false;  // a claim has been tried
  bool active = false;   // this watcher holds the stack
  std::string holder;    // standby: who holds it; or the claim's error
  std::optional<StackRunRecord> last, last_ok;
};

int64_t WatchNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Watcher::Watcher(std::vector<WatchedStack> stacks, WatcherOptions options)
    : options_(std::move(options)), started_ms_(WatchNowMs()) {
  MutexLock lock(mu_);
  rng_.seed(std::random_device{}());
  for (WatchedStack& s : stacks) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->stack = std::move(s);
  }
}

Watcher::~Watcher() { Stop(); }

void Watcher::Schedule(Slot& slot, int64_t from_ms, bool first) {
  const double interval = static_cast<double>(slot.stack.interval.count());
  if (first) {
    const double spread =
        std::min(interval, static_cast<double>(options_.first_run_spread.count()));
    slot.due_ms =
        from_ms + static_cast<int64_t>(std::uniform_real_distribution<double>(0, spread)(rng_));
    return;
  }
  const double j = std::clamp(options_.jitter, 0.0, 0.9);
  slot.due_ms = from_ms + static_cast<int64_t>(interval * std::uniform_real_distribution<double>(
                                                              1 - j, 1 + j)(rng_));
}

void Watcher::Start() {
  MutexLock lock(mu_);
  if (!workers_.empty()) return;
  stop_ = std::stop_source();
  const int64_t now = WatchNowMs();
  for (auto& slot : slots_) Schedule(*slot, now, /*first=*/true);
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) {
    workers_.emplace_back([this, token = stop_.get_token()] { Work(token); });
  }
}

void Watcher::Stop() {
  std::vector<std::jthread> workers;
  {
    MutexLock lock(mu_);
    stop_.request_stop();
    workers = std::move(workers_);
    workers_.clear();
  }
  cv_.NotifyAll();
  workers.clear();  // joins: the runs in flight finish first
}

void Watcher::Replace(std::vector<WatchedStack> stacks) {
  Stop();
  {
    MutexLock lock(mu_);
    std::map<std::string, std::unique_ptr<Slot>> old;
    for (auto& slot : slots_) old[slot->stack.info.name] = std::move(slot);
    slots_.clear();
    for (WatchedStack& s : stacks) {
      auto slot = std::make_unique<Slot>();
      if (auto it = old.find(s.info.name); it != old.end()) {
        slot->last = std::move(it->second->last);
        slot->last_ok = std::move(it->second->last_ok);
      }
      slot->stack = std::move(s);
      slots_.push_back(std::move(slot));
    }
  }
  Start();
}

void Watcher::Work(std::stop_token stop) {
  MutexUnlockableLock lock(mu_);
  while (!stop.stop_requested()) {
    Slot* next = nullptr;
    for (auto& slot : slots_) {
      if (!slot->running && (next == nullptr || slot->due_ms < next->due_ms)) next = slot.get();
    }
    // Woken by a stop, or by a run's end (a stack free to run again).
    const uint64_t seen = wakes_;
    auto woken = [this, seen]() REQUIRES(mu_) { return wakes_ != seen; };
    if (next == nullptr) {
      cv_.Wait(mu_, stop, woken);
      continue;
    }
    const int64_t now = WatchNowMs();
    if (next->due_ms > now) {
      cv_.WaitUntil(
          mu_, stop,
          std::chrono::steady_clock::now() + std::chrono::milliseconds(next->due_ms - now), woken);
      continue;
    }
    Slot& slot = *next;
    slot.running = true;
    WatchTarget& target = *slot.stack.target;
    lock.Unlock();

    std::string holder;
    Result<bool> claim = target.Claim(&holder);
    std::optional<StackRunRecord> record;
    if (claim.ok() && *claim) record = target.Run(stop);

    lock.Lock();
    const bool was_active = slot.active, was_claimed = slot.claimed;
    slot.claimed = true;
    slot.active = claim.ok() && *claim;
    slot.holder = slot.active ? "" : holder;
    if (!claim.ok()) {
      // The claim itself failed (the state cannot be reached): a failed run.
      record = StackRunRecord{};
      record->started_ms = record->finished_ms = WatchNowMs();
      record->error = "cannot claim the stack: " + claim.status().message();
    }
    if (record) {
      std::vector<Value> events = WatchEvents(slot.stack.info, slot.last ? &*slot.last : nullptr,
                                              slot.last_ok ? &*slot.last_ok : nullptr, *record);
      for (const Value& e : events) {
        if (options_.on_event) options_.on_event(e);
      }
      if (options_.on_run) options_.on_run(slot.stack.info, *record);
      if (!record->failed()) slot.last_ok = *record;
      // The last remediation decision stays shown until another is made.
      if (!record->remediation && slot.last && slot.last->remediation) {
        record->remediation = slot.last->remediation;
      }
      slot.last = std::move(record);
      ++runs_completed_;
    }
    if ((!was_claimed || was_active != slot.active) && options_.on_role) {
      options_.on_role(slot.stack.info, slot.active);
    }
    Schedule(slot, WatchNowMs(), /*first=*/false);
    slot.running = false;
    ++wakes_;
    cv_.NotifyAll();
  }
}

Value Watcher::StatusJson() const {
  MutexLock lock(mu_);
  const int64_t now = WatchNowMs();
  Value stacks = Value::array();
  for (const auto& slot : slots_) {
    const WatchedStack& s = slot->stack;
    Value v{{"name", s.info.name},
            {"dir", s.info.dir},
            {"workspace", s.info.workspace},
            {"interval_seconds", s.interval.count() / 1000.0},
            {"remediate", s.remediate ? "drift-only" : "none"},
            {"lease_holder", slot->holder},
            {"next_run_at", workers_.empty() ? "" : WatchTime(slot->due_ms)},
            {"last_run", nullptr},
            {"remediation", nullptr}};
    if (!slot->claimed) {
      v["role"] = "pending";
    } else {
      v["role"] = slot->active ? "active" : "standby";
    }
    if (slot->last && (slot->active || !slot->claimed)) {
      RunRecordToJson(*slot->last, slot->last_ok ? &*slot->last_ok : nullptr, v);
    } else {
      v["status"] = slot->claimed && !slot->active ? "standby" : "pending";
      v["drift"] = Value{{"changed", 0}, {"deleted", 0}, {"failed", 0}, {"unmanaged", 0}};
      v["checks"] = Value::array();
      v["resources"] = Value::array();
      v["unmanaged"] = Value::array();
    }
    stacks.push_back(std::move(v));
  }
  return Value{{"format_version", 1},
               {"generated_at", WatchTime(now)},
               {"watcher",
                {{"holder", options_.holder},
                 {"started_at", WatchTime(started_ms_)},
                 {"remediate", options_.remediate},
                 {"threads", options_.threads}}},
               {"stacks", std::move(stacks)}};
}

int64_t Watcher::runs_completed() const {
  MutexLock lock(mu_);
  return runs_completed_;
}

size_t Watcher::stack_count() const {
  MutexLock lock(mu_);
  return slots_.size();
}

}  // namespace cairn
