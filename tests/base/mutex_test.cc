#include "base/mutex.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

namespace mutex_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

// Whether another thread could take `mu` now.
bool FreeElsewhere(Mutex& mu) {
  bool took = false;
  std::thread([&] {
    if (mu.try_lock()) {
      took = true;
      mu.unlock();
    }
  }).join();
  return took;
}

}  // namespace

TEST_CASE("MutexUnlockableLock holds its mutex until Unlock and again after Lock") {
  Mutex mu;
  {
    MutexUnlockableLock lock(mu);
    CHECK_FALSE(FreeElsewhere(mu));
    lock.Unlock();
    CHECK(FreeElsewhere(mu));
    lock.Lock();
    CHECK_FALSE(FreeElsewhere(mu));
  }
  CHECK(FreeElsewhere(mu));
}

TEST_CASE("MutexUnlockableLock let go at the end of its scope leaves the mutex alone") {
  Mutex mu;
  std::atomic<bool> held{false}, release{false};
  std::thread holder;
  {
    MutexUnlockableLock lock(mu);
    lock.Unlock();
    // Taken by another thread meanwhile: the lock's end must not release it.
    holder = std::thread([&] {
      mu.lock();
      held = true;
      while (!release) std::this_thread::yield();
      mu.unlock();
    });
    while (!held) std::this_thread::yield();
  }
  CHECK_FALSE(FreeElsewhere(mu));
  release = true;
  holder.join();
  CHECK(FreeElsewhere(mu));
}

}  // namespace mutex_test
