#include "base/clock.h"

#include <thread>

namespace cairn {

bool RealClock::SleepFor(duration d, std::stop_token stop) {
  if (stop.stop_requested()) return false;
  if (!stop.stop_possible()) {
    // Nothing can cut it short (an apply's in-flight waits): a plain sleep,
    // without the condition variable's locking and wake-ups.
    std::this_thread::sleep_for(d);
    return true;
  }
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  // A wait with a stop_token wakes early when a stop is requested.
  cv.WaitUntil(mu, stop, std::chrono::steady_clock::now() + d, [] { return false; });
  return !stop.stop_requested();
}

int64_t RealClock::UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Clock::time_point ManualClock::Now() {
  MutexLock lock(mu_);
  return now_;
}

bool ManualClock::SleepFor(duration d, std::stop_token stop) {
  if (stop.stop_requested()) return false;
  MutexLock lock(mu_);
  now_ += d;
  slept_ += d;
  return true;
}

int64_t ManualClock::UnixSeconds() {
  MutexLock lock(mu_);
  return unix_base_ +
         std::chrono::duration_cast<std::chrono::seconds>(now_.time_since_epoch()).count();
}

void ManualClock::Advance(duration d) {
  MutexLock lock(mu_);
  now_ += d;
}

Clock::duration ManualClock::total_slept() {
  MutexLock lock(mu_);
  return slept_;
}

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

}  // namespace cairn
