// The read-files stage alone: paths and an in-memory Env in, the manifest
// files with their contents, the stack's root and diagnostics out.
#include "engine/manifest/read_files.h"

#include <catch2/catch.hpp>

#include "base/env.h"

namespace read_files_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

MemEnv Stack() {
  MemEnv env;
  env.AddFile("stack/b.yaml", "kind: network\n");
  env.AddFile("stack/a.yml", "kind: volume\n");
  env.AddFile("stack/notes.txt", "not a manifest\n");
  env.AddFile("stack/sub/c.yaml", "kind: instance\n");
  env.AddFile("other/d.yaml", "kind: dns_record\n");
  return env;
}

std::vector<std::string> Names(const ManifestFiles& files) {
  std::vector<std::string> out;
  for (const auto& [name, content] : files) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("read_files: a directory's manifests, in name order, with their contents") {
  MemEnv env = Stack();
  ReadFilesResult r = ReadManifestFiles({"stack"}, false, env);
  CHECK(r.diagnostics.empty());
  CHECK(r.root == "stack");
  REQUIRE(Names(r.files) == std::vector<std::string>{"stack/a.yml", "stack/b.yaml"});
  CHECK(r.files[0].second == "kind: volume\n");
  CHECK(r.files[1].second == "kind: network\n");
}

TEST_CASE("read_files: recursive reads subdirectories too") {
  MemEnv env = Stack();
  ReadFilesResult r = ReadManifestFiles({"stack"}, true, env);
  CHECK(r.diagnostics.empty());
  CHECK(Names(r.files) ==
        std::vector<std::string>{"stack/a.yml", "stack/b.yaml", "stack/sub/c.yaml"});
}

TEST_CASE("read_files: a file given twice is read once and the root is the first path's") {
  MemEnv env = Stack();
  ReadFilesResult r =
      ReadManifestFiles({"other/d.yaml", "stack", "other/./d.yaml", "stack/b.yaml"}, false, env);
  CHECK(r.diagnostics.empty());
  CHECK(r.root == "other");
  CHECK(Names(r.files) == std::vector<std::string>{"other/d.yaml", "stack/a.yml", "stack/b.yaml"});
  CHECK(r.files[0].second == "kind: dns_record\n");
}

TEST_CASE("read_files: a file without a directory part has root \".\"") {
  MemEnv env;
  env.AddFile("main.yaml", "kind: network\n");
  ReadFilesResult r = ReadManifestFiles({"main.yaml"}, false, env);
  CHECK(r.root == ".");
  CHECK(Names(r.files) == std::vector<std::string>{"main.yaml"});
}

TEST_CASE("read_files: no paths means the current directory") {
  MemEnv env;
  env.AddFile("main.yaml", "kind: network\n");
  env.AddFile("sub/x.yaml", "kind: volume\n");
  ReadFilesResult r = ReadManifestFiles({}, false, env);
  CHECK(r.root == ".");
  CHECK(Names(r.files) == std::vector<std::string>{"main.yaml"});
}

TEST_CASE("read_files: a path that is not there is path_not_found, the others still read") {
  MemEnv env = Stack();
  ReadFilesResult r = ReadManifestFiles({"missing", "stack/b.yaml"}, false, env);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "path_not_found");
  CHECK(r.diagnostics[0].is_error());
  CHECK(r.diagnostics[0].summary == "no such file or directory: missing");
  CHECK(r.diagnostics[0].location.file.empty());
  CHECK(r.root == "stack");
  CHECK(Names(r.files) == std::vector<std::string>{"stack/b.yaml"});
}

TEST_CASE("read_files: a file that cannot be read is reported and kept empty") {
  MemEnv env = Stack();
  ManifestFiles files = {{"stack/b.yaml", ""}, {"stack/gone.yaml", ""}, {"stack/sub", ""}};
  std::vector<Diagnostic> diags;
  ReadContents(env, files, diags);
  CHECK(files[0].second == "kind: network\n");
  CHECK(files[1].second.empty());
  CHECK(files[2].second.empty());
  REQUIRE(diags.size() == 2);
  CHECK(diags[0].code == "file_not_found");
  CHECK(diags[0].summary.rfind("cannot read stack/gone.yaml: ", 0) == 0);
  CHECK(diags[1].code == "file_not_regular");  // a directory
  CHECK(diags[1].summary == "cannot read stack/sub: a directory");
  CHECK(diags[1].detail == "only regular files are read");
}

TEST_CASE("read_files: each refusal of Env::ReadFile has its code") {
  std::vector<Diagnostic> diags;
  SourceLocation at{"main.yaml", 3, 7, 0};
  AddUnreadable(diags, "cannot read file \"x\"", Status::FailedPrecondition("too large"), at,
                "file() paths are relative");
  AddUnreadable(diags, "cannot read y", Status::InvalidArgument("a FIFO"), {}, "why");
  AddUnreadable(diags, "cannot read z", Status::NotFound("gone"), {}, "");
  REQUIRE(diags.size() == 3);
  CHECK(diags[0].code == "file_too_large");
  CHECK(diags[0].summary == "cannot read file \"x\": too large");
  CHECK(diags[0].detail == "file() paths are relative");
  CHECK(diags[0].location.line == 3);
  CHECK(diags[0].location.column == 7);
  CHECK(diags[1].code == "file_not_regular");
  CHECK(diags[1].detail == "only regular files are read; why");
  CHECK(diags[2].code == "file_not_found");
  CHECK(diags[2].summary == "cannot read z: gone");
}

}  // namespace read_files_test
