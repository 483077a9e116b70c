// A machine crash under the SQLite state store: a child process commits
// through a VFS that keeps an image of each file at every sync
// (tests/engine/support/crash_vfs.h) and is killed at a point of the test's
// choosing; the files are then put back to their last synced content, as a
// power loss would leave them, and the state is opened again. Every write
// acknowledged as durable (Durability::kImmediate) must be there, and the
// deferred ones may be lost only as a suffix (docs/architecture.md, State).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "engine/state/sqlite_state_store.h"
#include "tests/engine/support/crash_vfs.h"
#include "tests/support/process.h"

namespace sqlite_machine_crash_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;

namespace {

std::string Address(int i) { return "instance.r[" + std::to_string(i) + "]"; }

bool Immediate(int i) { return i % 3 == 0; }

// The child: commits resource i with its durability, then acknowledges it
// on `ack` ('I' or 'D'), until it is killed.
[[noreturn]] void CommitForever(const std::string& path, int ack) {
  cairn::testing::InstallCrashVfs();
  auto store = SqliteStateStore::Open(path);
  if (!store.ok()) _exit(2);
  for (int i = 0;; ++i) {
    StateCommit c;
    ResourceState rs;
    rs.address = Address(i);
    rs.kind = "instance";
    rs.id = "id-" + std::to_string(i);
    rs.attributes = {{"id", rs.id}, {"n", i}};
    c.put.push_back(rs);
    c.durability = Immediate(i) ? Durability::kImmediate : Durability::kDeferred;
    if (!(*store)->Commit(c).ok()) _exit(3);
    const char mark = Immediate(i) ? 'I' : 'D';
    if (write(ack, &mark, 1) != 1) _exit(4);
  }
}

}  // namespace

TEST_CASE("sqlite state: after a machine crash every durable commit is there", "[state]") {
  for (int trial = 0; trial < 12; ++trial) {
    TempDir tmp;
    const std::string path = tmp.path() + "/state.db";
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      CommitForever(path, fds[1]);
    }
    close(fds[1]);
    // Kill after a number of acknowledged commits that varies by trial,
    // while the child is already on the next one.
    const int wanted = 1 + trial * 7 % 40;
    int acked = 0, last_immediate = -1;
    char mark;
    while (acked < wanted && read(fds[0], &mark, 1) == 1) {
      if (mark == 'I') last_immediate = acked;
      ++acked;
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    // Acknowledged before the kill landed: durable ones count as durable.
    while (read(fds[0], &mark, 1) == 1) {
      if (mark == 'I') last_immediate = acked;
      ++acked;
    }
    close(fds[0]);
    INFO("trial " << trial << ": " << acked << " acknowledged, the last durable one "
                  << last_immediate);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(acked >= wanted);

    cairn::testing::RestoreSyncedFiles(tmp.path());
    auto store = SqliteStateStore::Open(path);
    REQUIRE(store.ok());
    auto state = (*store)->Load();
    REQUIRE(state.ok());
    // What survived is a prefix of the commits: 0 .. present-1.
    int present = 0;
    while (state->resources.count(Address(present))) ++present;
    CHECK(state->resources.size() == static_cast<size_t>(present));
    // Every durable commit (and so every one before it) is there; at most
    // the one in flight when the process died is there unacknowledged.
    CHECK(present >= last_immediate + 1);
    CHECK(present <= acked + 1);
  }
}

// Sync() is what bounds the loss of deferred writes to about a second in an
// apply: it must put them on stable storage by itself, without waiting for
// the next immediate write. (It did not: its commit changed no byte, so
// SQLite wrote and synced nothing.)
TEST_CASE("sqlite state: Sync makes the deferred commits before it survive a machine crash",
          "[state]") {
  TempDir tmp;
  const std::string path = tmp.path() + "/state.db";
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    cairn::testing::InstallCrashVfs();
    auto store = SqliteStateStore::Open(path);
    if (!store.ok()) _exit(2);
    for (int i = 0; i < 3; ++i) {
      StateCommit c;
      ResourceState rs;
      rs.address = Address(i);
      rs.kind = "instance";
      rs.id = "id-" + std::to_string(i);
      c.put.push_back(rs);
      // The first one durable, so that the file and its WAL exist on disk.
      c.durability = i == 0 ? Durability::kImmediate : Durability::kDeferred;
      if (!(*store)->Commit(c).ok()) _exit(3);
    }
    if (!(*store)->Sync().ok()) _exit(4);
    if (write(fds[1], "S", 1) != 1) _exit(5);
    pause();  // killed here, no write after the Sync
    _exit(6);
  }
  close(fds[1]);
  char mark = 0;
  REQUIRE(read(fds[0], &mark, 1) == 1);
  CHECK(mark == 'S');
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  REQUIRE(WIFSIGNALED(status));

  cairn::testing::RestoreSyncedFiles(tmp.path());
  auto store = SqliteStateStore::Open(path);
  REQUIRE(store.ok());
  auto state = (*store)->Load();
  REQUIRE(state.ok());
  CHECK(state->resources.count(Address(0)) == 1);
  CHECK(state->resources.count(Address(1)) == 1);
  CHECK(state->resources.count(Address(2)) == 1);
  CHECK(state->serial == 3);
}

}  // namespace sqlite_machine_crash_test
