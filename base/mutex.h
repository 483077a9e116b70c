// Mutex, MutexLock, MutexUnlockableLock and CondVar: std::mutex and
// std::condition_variable_any as capabilities clang's thread-safety
// analysis checks (base/thread_annotations.h), after LevelDB's port::Mutex. Every mutex in
// Cairn that guards data is a cairn::Mutex, and what it guards says so
// with GUARDED_BY.
//
// A wait releases the mutex and takes it again before returning, so to the
// analysis it holds the mutex throughout: a predicate passed to a wait
// runs with it held, and says so (`[&]() REQUIRES(mu_) { return done_; }`).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <stop_token>

#include "base/thread_annotations.h"

namespace cairn {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Lowercase, so that a Mutex is BasicLockable (std::condition_variable_any
  // and std::unique_lock take it).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds it (where it cannot see that).
  void AssertHeld() ASSERT_CAPABILITY(this) {}

 private:
  std::mutex mu_;
};

// Holds a Mutex for a scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Holds a Mutex for a scope, and may let it go and take it again inside
// it: Unlock() and Lock() (a relockable scoped capability, which clang's
// analysis follows). Held or not at the end of the scope, it is let go only
// if held. A wait while it is held names its Mutex (`cv.Wait(mu, ...)`):
// the analysis knows the Mutex is held through the lock, and refuses a wait
// after Unlock(). (A function cannot release a lock passed to it by
// reference: clang 14's analysis has no name for the lock's Mutex there.)
class SCOPED_CAPABILITY MutexUnlockableLock {
 public:
  explicit MutexUnlockableLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexUnlockableLock() RELEASE() {
    if (locked_) mu_.unlock();
  }
  MutexUnlockableLock(const MutexUnlockableLock&) = delete;
  MutexUnlockableLock& operator=(const MutexUnlockableLock&) = delete;

  void Lock() ACQUIRE() {
    mu_.lock();
    locked_ = true;
  }
  void Unlock() RELEASE() {
    mu_.unlock();
    locked_ = false;
  }

 private:
  Mutex& mu_;
  bool locked_ = true;
};

// A std::shared_mutex as a capability: many readers or one writer.
class CAPABILITY("shared mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a SharedMutex for reading for a scope.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderMutexLock() RELEASE() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex for writing for a scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterMutexLock() RELEASE() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// A condition variable waited on with a Mutex held.
class CondVar {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  void Wait(Mutex& mu) REQUIRES(mu) { cv_.wait(mu); }
  template <class Predicate>
  void Wait(Mutex& mu, Predicate done) REQUIRES(mu) {
    cv_.wait(mu, std::move(done));
  }
  // Waits until `done` or `stop` is requested; returns done().
  template <class Predicate>
  bool Wait(Mutex& mu, std::stop_token stop, Predicate done) REQUIRES(mu) {
    return cv_.wait(mu, std::move(stop), std::move(done));
  }
  // Waits until notified or `deadline`; returns false on the deadline.
  bool WaitUntil(Mutex& mu, time_point deadline) REQUIRES(mu) {
    return cv_.wait_until(mu, deadline) == std::cv_status::no_timeout;
  }
  // Waits until `done` or `deadline`; returns done().
  template <class Predicate>
  bool WaitUntil(Mutex& mu, time_point deadline, Predicate done) REQUIRES(mu) {
    return cv_.wait_until(mu, deadline, std::move(done));
  }
  // Waits until `done`, `deadline` or `stop`; returns done().
  template <class Predicate>
  bool WaitUntil(Mutex& mu, std::stop_token stop, time_point deadline, Predicate done)
      REQUIRES(mu) {
    return cv_.wait_until(mu, std::move(stop), deadline, std::move(done));
  }

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace cairn
