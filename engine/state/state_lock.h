// The parts of the state lock every backend shares: who the holder is, fresh
// random ids (lock ids and lineages, UUIDs from OpenSSL's CSPRNG), the
// conflict message, the wait loop behind `--lock-timeout`, and what
// commands do about a lock whose holder is gone.
//
// A lock is never broken silently. When the holder ran on this host and its
// process is gone, the conflict message says so and points at force-unlock;
// a command that takes the lock (ReleaseLockOfGoneHolder) says it took it
// over. A live holder's lock, or one whose holder this host cannot see, is
// released only by the user (force-unlock).
//
// Thread-safe: everything here is a pure function or touches only its
// arguments.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "engine/state/state_store.h"

namespace cairn {

// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", from
// OpenSSL RAND_bytes. Internal error if the CSPRNG fails.
Result<std::string> RandomUuid();

// "user@host pid 1234 (boot 0f3c..., pidns 4026531836, start 98765)" for
// this process: the boot id, the PID namespace and the process start time
// (clock ticks since boot) make it name one process even when machines or
// containers share a host name or a pid is reused (the part in parentheses
// is left out if /proc cannot tell).
std::string CurrentLockHolder();

// 1700000000 -> "2023-11-14T22:13:20Z".
std::string FormatIsoTime(int64_t unix_seconds);

// True when `holder` (as built by CurrentLockHolder) names a process of this
// boot of this host, in this PID namespace, that no longer exists (its pid
// is free, or used by a process that started at another time). False when
// unsure: other host, boot or namespace, or no such details (older Cairn).
bool LockHolderIsGone(const std::string& holder);

// True when `holder` names a process of this boot of this host, in this PID
// namespace, that still runs (its pid is held by the process that started at
// the recorded time). False when gone or unsure, as above. Releasing such a
// holder's lock lets two writers in at once: force-unlock asks first.
bool LockHolderIsRunning(const std::string& holder);

// The Conflict status for a lock held by `held`:
//   state is locked by alice@ci pid 42 (operation apply) since
//   2026-11-21T20:50:55Z (lock ID 3f1c...); use --lock-timeout to wait, or
//   'cairn force-unlock 3f1c...' if that process is gone
// with "; the holder process no longer runs on this host" inserted when
// LockHolderIsGone(held.holder).
Status LockConflict(const LockInfo& held);

// Calls `try_once` until it returns anything but Conflict, or until `wait`
// has passed on `clock` (sleeping with capped exponential backoff between
// attempts). A zero or negative wait means one attempt. On timeout the last
// Conflict is returned with "(waited N s)" appended.
Result<LockInfo> WaitForLock(Clock& clock, std::chrono::milliseconds wait,
                             const std::function<Result<LockInfo>()>& try_once);

// Releases the lock of `store` when its holder ran on this host and is gone
// (LockHolderIsGone: a kill -9, a crash): whatever it had in flight is in
// the journal, which the next apply and destroy finish first. By id, so
// that a lock another process took over meanwhile is left alone. Returns
// the lock released, for the caller to say so; nullopt when none was (no
// lock, a live or remote holder, it changed hands, or it cannot be read).
// A live or remote holder's lock stays: that is a conflict.
std::optional<LockInfo> ReleaseLockOfGoneHolder(StateStore& store);

// For readers (plan): waits up to `wait` on `clock` while a holder that is
// not gone has the lock of `store`. Returns the lock still held after that,
// or nullopt when the state is free (or its holder is gone); an error when
// the lock cannot be read.
Result<std::optional<LockInfo>> WaitWhileLocked(StateStore& store, Clock& clock,
                                                std::chrono::milliseconds wait);

}  // namespace cairn
