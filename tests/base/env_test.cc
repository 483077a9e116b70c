// Env: the disk (PosixEnv) and files in memory (MemEnv) answer alike.
#include "base/env.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/process.h"

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
    REQUIRE(e.WriteFileAtomically(file, "second, longer\n", 0644).ok());
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
    REQUIRE(e.WriteFile(d + "/a", "content", 0600).ok());
    REQUIRE(e.WriteFile(d + "/a", "new", 0600).ok());  // truncated
    CHECK(e.SyncFile(d + "/a").ok());
    CHECK(e.RenameFile(d + "/a", d + "/b").ok());
    CHECK(e.SyncDir(d).ok());
    CHECK_FALSE(e.Exists(d + "/a"));
    auto read = e.ReadFile(d + "/b", 100);
    REQUIRE(read.ok());
    CHECK(*read == "new");
    // Over a directory, or into one that is not there: an error.
    CHECK(e.RenameFile(d + "/b", d + "/sub").code() == StatusCode::kIOError);
    CHECK(e.WriteFile(d + "/missing/x", "x", 0600).code() == StatusCode::kNotFound);
    CHECK(e.RemoveFile(d + "/b").ok());
    for (const Status& st : {e.SyncFile(d + "/b"), e.RenameFile(d + "/b", d + "/c"),
                             e.RemoveFile(d + "/b"), e.SyncDir(d + "/missing")}) {
      CHECK(st.code() == StatusCode::kNotFound);
      CHECK(st.message().find(d + "/") != std::string::npos);
    }
  }
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
