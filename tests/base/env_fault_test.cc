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
#include <set>

#include "base/env.h"
#include "tests/base/support/fault_injection_env.h"
#include "tests/support/process.h"

namespace env_fault_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FaultInjectionEnv;
using cairn::testing::TempDir;

namespace {

const std::string kOld = "the old plan\n";
const std::string kNew = "the new plan, longer than the old one\n";

// The temporary file a writer created: the first file created (a write
// step, not a truncation), if any step went through.
std::optional<std::string> TempIn(const std::vector<std::string>& calls) {
  for (const std::string& call : calls)
    if (call.rfind("write ", 0) == 0) return call.substr(6);
  return std::nullopt;
}
// The custom writers below use a fixed temporary name.
std::string TempOf(const std::string& path) { return path + ".tmp"; }
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
    if (auto tmp = TempIn(env.calls()); tmp && f.base().Exists(*tmp))
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
    REQUIRE(TempIn(env.calls()));
    const std::string tmp = *TempIn(env.calls());
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
          Status st = env.WriteFile(tmp, content, {}, WriteMode::kCreateNew);
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
          Status st = env.WriteFile(tmp, content, {}, WriteMode::kCreateNew);
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
      Status st = env.WriteFile(path, content, {}, WriteMode::kTruncate);
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
        if (auto tmp = TempIn(env.calls())) CHECK_FALSE(f.base().Exists(*tmp));
        if (on_disk) {
          for (const auto& entry : std::filesystem::directory_iterator(f.dir))
            CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
        }
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

namespace {

// An Env over a MemEnv whose first `taken` file creations find the name
// taken, as a name someone planted a file or a link at would be.
class TakenNamesEnv final : public Env {
 public:
  TakenNamesEnv(const MemEnv& base, int taken) : base_(base), taken_(taken) {}
  Result<std::string> ReadFile(const std::string& path, size_t limit) const override {
    return base_.ReadFile(path, limit);
  }
  bool IsDirectory(const std::string& path) const override { return base_.IsDirectory(path); }
  bool Exists(const std::string& path) const override { return base_.Exists(path); }
  std::vector<std::string> ListFiles(const std::string& dir, bool recursive,
                                     const std::vector<std::string>& ext) const override {
    return base_.ListFiles(dir, recursive, ext);
  }
  std::string Canonical(const std::string& path) const override { return base_.Canonical(path); }
  const char* GetEnv(const char* name) const override { return base_.GetEnv(name); }
  Status WriteFile(const std::string& path, const std::string& content,
                   const FileAttributes& attributes, WriteMode how) const override {
    tried.push_back(path);
    if (how == WriteMode::kCreateNew && taken_ > 0) {
      --taken_;
      return Status::AlreadyExists("cannot create " + path + ": it exists");
    }
    return base_.WriteFile(path, content, attributes, how);
  }
  Status SyncFile(const std::string& path) const override { return base_.SyncFile(path); }
  Status RenameFile(const std::string& from, const std::string& to) const override {
    return base_.RenameFile(from, to);
  }
  Status SyncDir(const std::string& dir) const override { return base_.SyncDir(dir); }
  Status RemoveFile(const std::string& path) const override { return base_.RemoveFile(path); }

  mutable std::vector<std::string> tried;  // every name WriteFile was asked to create

 private:
  const MemEnv& base_;
  mutable int taken_;
};

bool IsTemporaryOf(const std::string& tmp, const std::string& path) {
  const std::string prefix = path + ".tmp.";
  if (tmp.size() != prefix.size() + 16 || tmp.compare(0, prefix.size(), prefix) != 0) return false;
  return tmp.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

}  // namespace

TEST_CASE("WriteFileAtomically draws a new unguessable temporary name, and another when taken") {
  MemEnv mem;
  mem.AddFile("stack/README", "r");
  // Every write its own name, from a CSPRNG: not the process id, which
  // someone could plant a link at in advance.
  std::set<std::string> names;
  for (int i = 0; i < 4; ++i) {
    FaultInjectionEnv env(mem);
    REQUIRE(env.WriteFileAtomically("stack/plan.json", kNew).ok());
    auto tmp = TempIn(env.calls());
    REQUIRE(tmp);
    CHECK(IsTemporaryOf(*tmp, "stack/plan.json"));
    CHECK(tmp->find(std::to_string(::getpid())) == std::string::npos);
    names.insert(*tmp);
  }
  CHECK(names.size() == 4);
  // A taken name is left alone and another drawn...
  TakenNamesEnv some_taken(mem, 3);
  REQUIRE(some_taken.WriteFileAtomically("stack/plan.json", "after retries").ok());
  CHECK(some_taken.tried.size() == 4);
  CHECK(std::set<std::string>(some_taken.tried.begin(), some_taken.tried.end()).size() == 4);
  CHECK(*mem.ReadFile("stack/plan.json", 100) == "after retries");
  // ...but not forever: 16 taken in a row fail the write, the file as it was.
  TakenNamesEnv all_taken(mem, 1000);
  const Status st = all_taken.WriteFileAtomically("stack/plan.json", "never");
  CHECK(st.code() == StatusCode::kIOError);
  CHECK(st.message() == "cannot write stack/plan.json: 16 temporary names beside it were taken");
  CHECK(all_taken.tried.size() == 16);
  CHECK(*mem.ReadFile("stack/plan.json", 100) == "after retries");
}

}  // namespace env_fault_test
