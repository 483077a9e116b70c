// Clock: the only way engine and provider code reads time or sleeps, so that
// retries, backoff, lock timeouts and waits run instantly in tests with a
// ManualClock. Sleeps are cancellable through a std::stop_token.
#pragma once

#include <chrono>
#include <stop_token>

#include "base/mutex.h"

namespace cairn {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;
  virtual time_point Now() = 0;
  // Sleeps for `d` or until `stop` is requested; returns false if stopped.
  virtual bool SleepFor(duration d, std::stop_token stop) = 0;
  // Wall-clock time as seconds since the epoch (for state and lock records).
  virtual int64_t UnixSeconds() = 0;
};

// The steady clock and real sleeps. Thread-safe.
class RealClock final : public Clock {
 public:
  time_point Now() override { return std::chrono::steady_clock::now(); }
  bool SleepFor(duration d, std::stop_token stop) override;
  int64_t UnixSeconds() override;
};

// A clock that only moves when slept on or advanced: SleepFor advances time
// by the requested amount at once. Thread-safe.
class ManualClock final : public Clock {
 public:
  time_point Now() override;
  bool SleepFor(duration d, std::stop_token stop) override;
  int64_t UnixSeconds() override;
  void Advance(duration d);
  // Total time slept through SleepFor, for assertions on backoff.
  duration total_slept();

 private:
  Mutex mu_;
  time_point now_ GUARDED_BY(mu_){};
  duration slept_ GUARDED_BY(mu_){};
  int64_t unix_base_ = 1'700'000'000;
};

// The process-wide real clock.
Clock& SystemClock();

}  // namespace cairn
