// Env: the disk (PosixEnv) and files in memory (MemEnv) answer alike.
#include "base/env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/process.h"

namespace env_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

TEST_CASE("PosixEnv and MemEnv list, read and refuse the same way") {
  TempDir tmp;
  const std::string d = tmp.path();
  MemEnv mem;
  for (const char* rel : {"a.yaml", "b.yml", "notes.txt", "sub/c.yaml", "sub-x/d.yaml"}) {
    WriteFile(d + "/" + rel, std::string("# ") + rel + "\n");
    mem.AddFile(d + "/" + rel, std::string("# ") + rel + "\n");
  }
  for (const Env* env : {&PosixEnv(), static_cast<const Env*>(&mem)}) {
    const Env& e = *env;
    CHECK(e.ListFiles(d, false, {".yaml", ".yml"}) ==
          std::vector<std::string>{d + "/a.yaml", d + "/b.yml"});
    // Recursive, in path order: "sub/" before "sub-x/" as a listing reads.
    CHECK(e.ListFiles(d + "/", true, {".yaml"}) ==
          std::vector<std::string>{d + "/a.yaml", d + "/sub/c.yaml", d + "/sub-x/d.yaml"});
    CHECK(e.IsDirectory(d + "/sub"));
    CHECK_FALSE(e.IsDirectory(d + "/a.yaml"));
    CHECK(e.Exists(d + "/sub/../a.yaml"));
    CHECK_FALSE(e.Exists(d + "/missing.yaml"));
    CHECK(e.Canonical(d + "/sub/..") == e.Canonical(d));
    auto read = e.ReadFile(d + "/sub/c.yaml", 100);
    REQUIRE(read.ok());
    CHECK(*read == "# sub/c.yaml\n");
    CHECK(e.ReadFile(d + "/missing.yaml", 100).status().code() == StatusCode::kNotFound);
    CHECK(e.ReadFile(d + "/sub", 100).status().code() == StatusCode::kInvalidArgument);
    CHECK(e.ReadFile(d + "/a.yaml", 4).status().code() == StatusCode::kFailedPrecondition);
  }
}

TEST_CASE("PosixEnv reads a FIFO as what it is, without blocking") {
  TempDir tmp;
  const std::string fifo = tmp.path() + "/pipe.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto read = PosixEnv().ReadFile(fifo, 100);
  CHECK(read.status().code() == StatusCode::kInvalidArgument);
  CHECK(read.status().message() == "a FIFO");
}

TEST_CASE("WriteFileAtomically replaces a file whole, leaves no temporary, and fails cleanly") {
  TempDir tmp;
  const std::string d = tmp.path();
  MemEnv mem;
  for (const Env* env : {&PosixEnv(), static_cast<const Env*>(&mem)}) {
    const Env& e = *env;
    const std::string file = d + "/plan.json";
    mem.AddFile(d + "/README", "a file, so that the directory exists in memory too");
    REQUIRE(e.WriteFileAtomically(file, "first\n").ok());
    REQUIRE(e.WriteFileAtomically(file, "second, longer\n", {.mode = 0644}).ok());
    auto read = e.ReadFile(file, 100);
    REQUIRE(read.ok());
    CHECK(*read == "second, longer\n");
    CHECK(e.ListFiles(d, false, {".json", ".0", ".1"}) == std::vector<std::string>{file});
    // Into a directory that does not exist, or over a directory: an error.
    CHECK_FALSE(e.WriteFileAtomically(d + "/missing/plan.json", "x").ok());
    WriteFile(d + "/sub/keep.yaml", "k");
    mem.AddFile(d + "/sub/keep.yaml", "k");
    CHECK_FALSE(e.WriteFileAtomically(d + "/sub", "x").ok());
    CHECK(e.IsDirectory(d + "/sub"));
  }
  // On disk: the mode asked for, and not one temporary file left over.
  struct stat st {};
  REQUIRE(stat((d + "/plan.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  for (const auto& entry : std::filesystem::directory_iterator(d))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("the steps of an atomic write answer alike on PosixEnv and MemEnv") {
  TempDir tmp;
  const std::string d = tmp.path();
  MemEnv mem;
  WriteFile(d + "/README", "r");
  mem.AddFile(d + "/README", "r");
  WriteFile(d + "/sub/keep.yaml", "k");
  mem.AddFile(d + "/sub/keep.yaml", "k");
  for (const Env* env : {&PosixEnv(), static_cast<const Env*>(&mem)}) {
    const Env& e = *env;
    REQUIRE(e.WriteFile(d + "/a", "content", {}, WriteMode::kCreateNew).ok());
    // kCreateNew never writes over a file; kTruncate does.
    CHECK(e.WriteFile(d + "/a", "other", {}, WriteMode::kCreateNew).code() ==
          StatusCode::kAlreadyExists);
    REQUIRE(e.WriteFile(d + "/a", "new", {}, WriteMode::kTruncate).ok());
    CHECK(e.SyncFile(d + "/a").ok());
    CHECK(e.RenameFile(d + "/a", d + "/b").ok());
    CHECK(e.SyncDir(d).ok());
    CHECK_FALSE(e.Exists(d + "/a"));
    auto read = e.ReadFile(d + "/b", 100);
    REQUIRE(read.ok());
    CHECK(*read == "new");
    // Over a directory, or into one that is not there: an error.
    CHECK(e.RenameFile(d + "/b", d + "/sub").code() == StatusCode::kIOError);
    CHECK(e.WriteFile(d + "/missing/x", "x", {}, WriteMode::kCreateNew).code() ==
          StatusCode::kNotFound);
    CHECK(e.RemoveFile(d + "/b").ok());
    for (const Status& st : {e.SyncFile(d + "/b"), e.RenameFile(d + "/b", d + "/c"),
                             e.RemoveFile(d + "/b"), e.SyncDir(d + "/missing")}) {
      CHECK(st.code() == StatusCode::kNotFound);
      CHECK(st.message().find(d + "/") != std::string::npos);
    }
  }
}

TEST_CASE(
    "PosixEnv never writes through a symbolic link, and gives a file exactly its attributes") {
  TempDir tmp;
  const std::string d = tmp.path();
  const std::string victim = d + "/victim";
  WriteFile(victim, "not yours\n");
  REQUIRE(symlink(victim.c_str(), (d + "/link").c_str()) == 0);
  REQUIRE(symlink((d + "/nowhere").c_str(), (d + "/dangling").c_str()) == 0);
  const Env& e = PosixEnv();
  CHECK(e.WriteFile(d + "/link", "x", {}, WriteMode::kCreateNew).code() ==
        StatusCode::kAlreadyExists);
  CHECK(e.WriteFile(d + "/dangling", "x", {}, WriteMode::kCreateNew).code() ==
        StatusCode::kAlreadyExists);
  const Status through = e.WriteFile(d + "/link", "x", {}, WriteMode::kTruncate);
  CHECK(through.code() == StatusCode::kIOError);
  CHECK(through.message() == "cannot write " + d + "/link: a symbolic link");
  CHECK(e.SyncFile(d + "/link").code() == StatusCode::kIOError);
  CHECK(cairn::testing::ReadFile(victim) == "not yours\n");
  CHECK_FALSE(std::filesystem::exists(d + "/nowhere"));

  // The mode exactly, whatever the umask; the owner when given (root only).
  const mode_t old_umask = umask(077);
  REQUIRE(e.WriteFileAtomically(d + "/shared.yaml", "s\n", {.mode = 0664}).ok());
  umask(old_umask);
  struct stat st {};
  REQUIRE(stat((d + "/shared.yaml").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0664);
  if (geteuid() == 0) {
    REQUIRE(e.WriteFileAtomically(d + "/theirs.yaml", "t\n",
                                  {.mode = 0640, .owner = 65534, .group = 65534})
                .ok());
    REQUIRE(stat((d + "/theirs.yaml").c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
    CHECK(st.st_gid == 65534);
    CHECK((st.st_mode & 07777) == 0640);
  } else {
    // Giving a file away takes privilege: refused, nothing replaced.
    const Status st2 = e.WriteFileAtomically(d + "/theirs.yaml", "t\n", {.owner = geteuid() + 1});
    CHECK(st2.code() == StatusCode::kIOError);
    CHECK_FALSE(std::filesystem::exists(d + "/theirs.yaml"));
  }
}

TEST_CASE("WriteFileAtomically leaves a link planted at the old temporary name alone") {
  // The old writer's temporary was PATH.tmp.PID: a link planted there for
  // the next process ids made a privileged `cairn fmt` or `plan --out`
  // overwrite the link's target.
  TempDir tmp;
  const std::string d = tmp.path();
  const std::string victim = d + "/victim";
  WriteFile(victim, "not yours\n");
  const std::string file = d + "/plan.json";
  const std::string planted = file + ".tmp." + std::to_string(getpid());
  REQUIRE(symlink(victim.c_str(), planted.c_str()) == 0);
  REQUIRE(PosixEnv().WriteFileAtomically(file, "the plan\n").ok());
  CHECK(cairn::testing::ReadFile(victim) == "not yours\n");
  CHECK(cairn::testing::ReadFile(file) == "the plan\n");
  struct stat st {};
  REQUIRE(lstat(planted.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));  // not ours to remove
  REQUIRE(lstat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("environment lookups: PosixEnv reads the process's, MemEnv only its own") {
  setenv("CAIRN_ENV_TEST_VALUE", "from the process", 1);
  REQUIRE(PosixEnv().GetEnv("CAIRN_ENV_TEST_VALUE") != nullptr);
  CHECK(std::string(PosixEnv().GetEnv("CAIRN_ENV_TEST_VALUE")) == "from the process");
  MemEnv mem;
  CHECK(mem.GetEnv("CAIRN_ENV_TEST_VALUE") == nullptr);
  mem.SetEnv("CAIRN_ENV_TEST_VALUE", "in memory");
  CHECK(std::string(mem.GetEnv("CAIRN_ENV_TEST_VALUE")) == "in memory");
  unsetenv("CAIRN_ENV_TEST_VALUE");
}

}  // namespace env_test
