#include "engine/state/state_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "engine/state/memory_state_store.h"

namespace state_lock_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

// `holder` with its pid replaced by `pid` and, when given, its start time by
// `start`.
std::string WithPid(const std::string& holder, pid_t pid, const std::string& start = "") {
  size_t p = holder.find(" pid ");
  size_t end = holder.find(' ', p + 5);
  std::string out = holder.substr(0, p + 5) + std::to_string(pid) + holder.substr(end);
  if (!start.empty()) {
    size_t s = out.find(", start ");
    out = out.substr(0, s + 8) + start + ")";
  }
  return out;
}

pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// A state whose lock is the one given (held by anyone), the rest a
// MemoryStateStore's; ForceUnlock by the lock's id removes it.
class LockedStore final : public StateStore {
 public:
  std::optional<LockInfo> held;
  int current_lock_reads = 0;
  Result<StateSnapshot> Load() override { return inner_.Load(); }
  Result<LockInfo> Lock(const std::string& op, std::chrono::milliseconds wait) override {
    return inner_.Lock(op, wait);
  }
  Status Unlock(const std::string& id) override { return inner_.Unlock(id); }
  Status ForceUnlock(const std::string& id) override {
    if (!held || held->id != id) return Status::NotFound("no lock " + id);
    held.reset();
    return Status::Ok();
  }
  Result<std::optional<LockInfo>> CurrentLock() override {
    ++current_lock_reads;
    return held;
  }
  Result<int64_t> ReserveSequences(int64_t n) override { return inner_.ReserveSequences(n); }
  Status JournalBeginAll(std::span<const JournalEntry> e) override {
    return inner_.JournalBeginAll(e);
  }
  Result<std::vector<JournalEntry>> PendingJournal() override { return inner_.PendingJournal(); }
  Result<int64_t> Commit(const StateCommit& c) override { return inner_.Commit(c); }
  Status Sync() override { return Status::Ok(); }

 private:
  MemoryStateStore inner_;
};

LockInfo HeldBy(const std::string& holder) {
  return {.id = "lock-1", .holder = holder, .operation = "apply", .created_at = 1'700'000'000};
}

}  // namespace

TEST_CASE("lock holder: names user, host, pid, boot, PID namespace and start time", "[state]") {
  std::string me = CurrentLockHolder();
  CHECK(me.find('@') != std::string::npos);
  CHECK(me.find(" pid " + std::to_string(getpid()) + " (boot ") != std::string::npos);
  CHECK(me.find(", pidns ") != std::string::npos);
  CHECK(me.find(", start ") != std::string::npos);
  CHECK(me.back() == ')');
  CHECK_FALSE(LockHolderIsGone(me));  // this process runs
}

TEST_CASE("lock holder: gone when its pid is free or taken by a later process", "[state]") {
  const std::string me = CurrentLockHolder();
  CHECK(LockHolderIsGone(WithPid(me, DeadPid())));
  // The pid runs, but it is another process than the holder (pid reuse).
  CHECK(LockHolderIsGone(WithPid(me, getpid(), "1")));
}

TEST_CASE("lock holder: never called gone when unsure", "[state]") {
  const std::string me = CurrentLockHolder();
  const pid_t dead = DeadPid();
  std::string dead_holder = WithPid(me, dead);
  // Another host.
  std::string other_host = dead_holder;
  other_host.replace(other_host.find('@') + 1, other_host.find(" pid ") - other_host.find('@') - 1,
                     "some-other-host");
  CHECK_FALSE(LockHolderIsGone(other_host));
  // Another PID namespace on the same host name (a container).
  std::string other_ns = dead_holder;
  size_t ns = other_ns.find(", pidns ") + 8;
  other_ns.replace(ns, other_ns.find(',', ns) - ns, "1");
  CHECK_FALSE(LockHolderIsGone(other_ns));
  // Another machine with the same host name (a cloned VM): another boot id.
  std::string other_boot = dead_holder;
  size_t boot = other_boot.find("(boot ") + 6;
  other_boot.replace(boot, other_boot.find(',', boot) - boot,
                     "00000000-0000-4000-8000-000000000000");
  CHECK_FALSE(LockHolderIsGone(other_boot));
  // The format of older versions, without boot, namespace and start time.
  CHECK_FALSE(LockHolderIsGone(dead_holder.substr(0, dead_holder.find(" (boot "))));
  // Garbage.
  CHECK_FALSE(LockHolderIsGone(""));
  CHECK_FALSE(LockHolderIsGone("nobody"));
  CHECK_FALSE(
      LockHolderIsGone(me.substr(0, me.find(" pid ")) + " pid x (boot b, pidns 1, start 2)"));
}

TEST_CASE("lock holder: running only when it provably is this very process", "[state]") {
  const std::string me = CurrentLockHolder();
  CHECK(LockHolderIsRunning(me));
  CHECK_FALSE(LockHolderIsRunning(WithPid(me, DeadPid())));
  CHECK_FALSE(LockHolderIsRunning(WithPid(me, getpid(), "1")));  // a reused pid
  // Unsure is not running either: another host, namespace or boot, or an
  // older Cairn's holder without those details.
  std::string other_host = me;
  other_host.replace(other_host.find('@') + 1, other_host.find(" pid ") - other_host.find('@') - 1,
                     "some-other-host");
  CHECK_FALSE(LockHolderIsRunning(other_host));
  std::string other_ns = me;
  size_t ns = other_ns.find(", pidns ") + 8;
  other_ns.replace(ns, other_ns.find(',', ns) - ns, "1");
  CHECK_FALSE(LockHolderIsRunning(other_ns));
  std::string other_boot = me;
  size_t boot = other_boot.find("(boot ") + 6;
  other_boot.replace(boot, other_boot.find(',', boot) - boot,
                     "00000000-0000-4000-8000-000000000000");
  CHECK_FALSE(LockHolderIsRunning(other_boot));
  CHECK_FALSE(LockHolderIsRunning(me.substr(0, me.find(" (boot "))));
  CHECK_FALSE(LockHolderIsRunning(""));
}

TEST_CASE("a lock whose holder is gone from this host is released, and only that one", "[state]") {
  const std::string me = CurrentLockHolder();
  LockedStore store;
  CHECK_FALSE(ReleaseLockOfGoneHolder(store).has_value());  // no lock
  store.held = HeldBy(WithPid(me, DeadPid()));
  std::optional<LockInfo> released = ReleaseLockOfGoneHolder(store);
  REQUIRE(released.has_value());
  CHECK(released->id == "lock-1");
  CHECK(released->operation == "apply");
  CHECK_FALSE(store.held.has_value());
  // A live holder, or one this host cannot see, keeps its lock.
  store.held = HeldBy(me);
  CHECK_FALSE(ReleaseLockOfGoneHolder(store).has_value());
  CHECK(store.held.has_value());
  std::string elsewhere = WithPid(me, DeadPid());
  elsewhere.replace(elsewhere.find('@') + 1, elsewhere.find(" pid ") - elsewhere.find('@') - 1,
                    "some-other-host");
  store.held = HeldBy(elsewhere);
  CHECK_FALSE(ReleaseLockOfGoneHolder(store).has_value());
  CHECK(store.held.has_value());
}

TEST_CASE("a reader waits while a live holder has the lock, not for a gone one", "[state]") {
  const std::string me = CurrentLockHolder();
  ManualClock clock;
  LockedStore store;
  // Free: at once.
  auto free = WaitWhileLocked(store, clock, std::chrono::seconds(30));
  REQUIRE(free.ok());
  CHECK_FALSE(free->has_value());
  CHECK(clock.total_slept() == std::chrono::seconds(0));
  // A gone holder's lock is no apply: not waited for, and left in place.
  store.held = HeldBy(WithPid(me, DeadPid()));
  auto gone = WaitWhileLocked(store, clock, std::chrono::seconds(30));
  REQUIRE(gone.ok());
  CHECK_FALSE(gone->has_value());
  CHECK(store.held.has_value());
  // A live holder: waited for up to the timeout, then returned.
  store.held = HeldBy(me);
  auto live = WaitWhileLocked(store, clock, std::chrono::seconds(30));
  REQUIRE(live.ok());
  REQUIRE(live->has_value());
  CHECK((*live)->id == "lock-1");
  CHECK(clock.total_slept() >= std::chrono::seconds(30));
  CHECK(store.current_lock_reads > 3);
  // No wait asked: one look.
  const int reads = store.current_lock_reads;
  auto once = WaitWhileLocked(store, clock, std::chrono::milliseconds(0));
  REQUIRE(once.ok());
  CHECK(once->has_value());
  CHECK(store.current_lock_reads == reads + 1);
}

}  // namespace state_lock_test
