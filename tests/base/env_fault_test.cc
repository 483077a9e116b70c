// Env::WriteFileAtomically under FaultInjectionEnv: a power loss at any step
// leaves the old file or the new one, and never loses a write that returned
// OK; the same harness fails writers that skip a sync, so it is not
// vacuous. Over files in memory and on the disk alike.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "base/env.h"
#include "tests/base/support/fault_injection_env.h"
#include "tests/support/process.h"

using namespace cairn;
using cairn::testing::FaultInjectionEnv;
using cairn::testing::TempDir;

namespace {

const std::string kOld = "the old plan\n";
const std::string kNew = "the new plan, longer than the old one\n";

std::string TempOf(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }
std::string DirOf(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

// A directory `dir` holding README, and `file` holding kOld when `with_old`:
// in a MemEnv, or on the disk.
struct Fixture {
  Fixture(bool on_disk, bool with_old) {
    if (on_disk) {
      tmp = std::make_unique<TempDir>();
      dir = tmp->path();
    }
    file = dir + "/plan.json";
    Add(dir + "/README", "keeps the directory there in memory too");
    if (with_old) Add(file, kOld);
  }
  void Add(const std::string& path, const std::string& content) {
    if (tmp)
      cairn::testing::WriteFile(path, content);
    else
      mem.AddFile(path, content);
  }
  const Env& base() const { return tmp ? PosixEnv() : mem; }

  MemEnv mem;
  std::unique_ptr<TempDir> tmp;
  std::string dir = "stack";
  std::string file;
};

std::optional<std::string> Content(const Env& env, const std::string& path) {
  auto read = env.ReadFile(path, 1 << 20);
  if (!read.ok()) return std::nullopt;
  return *read;
}

using Writer = std::function<Status(const Env&, const std::string& path, const std::string&)>;

Status Atomically(const Env& env, const std::string& path, const std::string& content) {
  return env.WriteFileAtomically(path, content);
}

struct CrashReport {
  // One letter per crash point, after 0, 1, ... steps, the last after every
  // step: what the file held after the power loss. O: the old file, -: no
  // file, N: the new one, ?: anything else.
  std::string outcomes;
  std::vector<std::string> problems;
};

// Runs `write` (kNew over the fixture's file) once per crash point, each run
// stopped by a crash after that many primitives and followed by a power loss.
// A problem: a file neither as before nor new, a write that returned OK but
// was lost, a temporary file left over.
CrashReport CrashAtEveryStep(const Writer& write, bool on_disk, bool with_old) {
  size_t steps = 0;
  {
    Fixture f(on_disk, with_old);
    FaultInjectionEnv env(f.base());
    REQUIRE(write(env, f.file, kNew).ok());
    steps = env.calls().size();
  }
  CrashReport report;
  for (size_t k = 0; k <= steps; ++k) {
    const std::string at = "crash after " + std::to_string(k) + " steps: ";
    Fixture f(on_disk, with_old);
    FaultInjectionEnv env(f.base());
    env.CrashAfter(static_cast<int>(k));
    const Status st = write(env, f.file, kNew);
    if (Status drop = env.DropUnsyncedData(); !drop.ok())
      report.problems.push_back(at + "power loss: " + drop.ToString());
    const auto content = Content(f.base(), f.file);
    const bool as_before = content == (with_old ? std::optional(kOld) : std::nullopt);
    if (content == kNew) {
      report.outcomes += 'N';
    } else if (as_before) {
      report.outcomes += with_old ? 'O' : '-';
      if (st.ok()) report.problems.push_back(at + "the write returned OK and was lost");
    } else {
      report.outcomes += '?';
      report.problems.push_back(at + "the file holds " +
                                (content ? "\"" + *content + "\"" : std::string("nothing")));
    }
    if (f.base().Exists(TempOf(f.file)))
      report.problems.push_back(at + "the temporary file is left");
  }
  return report;
}

std::string Problems(const CrashReport& report) {
  std::string out;
  for (const auto& p : report.problems) out += p + "\n";
  return out;
}

}  // namespace

TEST_CASE("a power loss after WriteFileAtomically returned keeps the new file") {
  for (bool on_disk : {false, true}) {
    CAPTURE(on_disk);
    Fixture f(on_disk, true);
    FaultInjectionEnv env(f.base());
    REQUIRE(env.WriteFileAtomically(f.file, kNew).ok());
    const std::string tmp = TempOf(f.file);
    CHECK(env.calls() == std::vector<std::string>{"write " + tmp, "sync " + tmp,
                                                  "rename " + tmp + " " + f.file,
                                                  "syncdir " + f.dir});
    REQUIRE(env.DropUnsyncedData().ok());
    CHECK(Content(f.base(), f.file) == kNew);
    CHECK_FALSE(f.base().Exists(tmp));
  }
}

TEST_CASE("a crash at any step of WriteFileAtomically leaves the old file or the new one") {
  for (bool on_disk : {false, true}) {
    CAPTURE(on_disk);
    // Old until the directory sync makes the rename durable.
    CrashReport over_old = CrashAtEveryStep(Atomically, on_disk, true);
    INFO(Problems(over_old));
    CHECK(over_old.problems.empty());
    CHECK(over_old.outcomes == "OOOON");
    // No file before: no file, or the whole new one.
    CrashReport fresh = CrashAtEveryStep(Atomically, on_disk, false);
    INFO(Problems(fresh));
    CHECK(fresh.problems.empty());
    CHECK(fresh.outcomes == "----N");
  }
}

TEST_CASE("the crash harness fails writers that skip a sync or write in place") {
  for (bool on_disk : {false, true}) {
    CAPTURE(on_disk);
    // Renamed before its content is synced: the name survives, the data not.
    CrashReport unsynced = CrashAtEveryStep(
        [](const Env& env, const std::string& path, const std::string& content) {
          const std::string tmp = TempOf(path);
          Status st = env.WriteFile(tmp, content, 0600);
          if (st.ok()) st = env.RenameFile(tmp, path);
          if (st.ok()) st = env.SyncDir(DirOf(path));
          return st;
        },
        on_disk, true);
    CHECK(unsynced.outcomes == "OOO?");
    CHECK_FALSE(unsynced.problems.empty());
    // The directory never synced: the rename, and so the write, is lost
    // after it returned OK.
    CrashReport no_dir_sync = CrashAtEveryStep(
        [](const Env& env, const std::string& path, const std::string& content) {
          const std::string tmp = TempOf(path);
          Status st = env.WriteFile(tmp, content, 0600);
          if (st.ok()) st = env.SyncFile(tmp);
          if (st.ok()) st = env.RenameFile(tmp, path);
          return st;
        },
        on_disk, true);
    CHECK(no_dir_sync.outcomes == "OOOO");
    REQUIRE(no_dir_sync.problems.size() == 1);
    CHECK(no_dir_sync.problems[0] == "crash after 3 steps: the write returned OK and was lost");
    // Truncated and rewritten in place: a crash before the sync empties it.
    Writer in_place = [](const Env& env, const std::string& path, const std::string& content) {
      Status st = env.WriteFile(path, content, 0600);
      if (st.ok()) st = env.SyncFile(path);
      if (st.ok()) st = env.SyncDir(DirOf(path));
      return st;
    };
    CrashReport over_old = CrashAtEveryStep(in_place, on_disk, true);
    CHECK(over_old.outcomes == "O?NN");
    CHECK_FALSE(over_old.problems.empty());
    // ...which is safe for a file that did not exist: no file, or all of it.
    CrashReport fresh = CrashAtEveryStep(in_place, on_disk, false);
    INFO(Problems(fresh));
    CHECK(fresh.outcomes == "---N");
    CHECK(fresh.problems.empty());
  }
}

TEST_CASE("a failing step fails WriteFileAtomically, leaves the old file and no temporary") {
  for (bool on_disk : {false, true}) {
    for (bool with_old : {true, false}) {
      for (int k = 0; k < 4; ++k) {
        CAPTURE(on_disk, with_old, k);
        Fixture f(on_disk, with_old);
        FaultInjectionEnv env(f.base());
        env.FailAfter(k);
        const Status st = env.WriteFileAtomically(f.file, kNew);
        REQUIRE_FALSE(st.ok());
        CHECK(st.code() == StatusCode::kIOError);
        CHECK_FALSE(f.base().Exists(TempOf(f.file)));
        const auto content = Content(f.base(), f.file);
        if (k < 3) {
          // Before the rename: the old file (or none) as it was.
          CHECK(content == (with_old ? std::optional(kOld) : std::nullopt));
          CHECK(st.message().find("replaced") == std::string::npos);
        } else {
          // Only the directory sync failed: replaced, and the error says so.
          CHECK(content == kNew);
          CHECK(st.message() == f.file +
                                    " was replaced but may not survive a power loss: "
                                    "injected fault: syncdir " +
                                    f.dir);
        }
      }
    }
  }
}
