// The bounds on what a command reads, through the real binary: cairn fmt
// refuses what validate refuses before reading any value (an alias bomb,
// NUL bytes, bytes that are not UTF-8) with the same diagnostics, and
// --max-instances / CAIRN_MAX_INSTANCES set the stack's instance limit.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <iterator>

#include "tests/support/process.h"

namespace input_limits_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

std::map<std::string, std::string> Env() {
  return {{"CAIRN_SCHEMA_DIR", CAIRN_SOURCE_SCHEMA_DIR},
          {"NO_COLOR", "1"},
          {"CAIRN_MAX_INSTANCES", ""}};
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// 10 levels of 10 aliases: 10^10 nodes once expanded, in 558 bytes.
std::string AliasBomb() {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string prev = "a";
  for (int i = 0; i < 9; ++i) {
    std::string name = "l" + std::to_string(i);
    yaml += name + ": &" + name + " [";
    for (int k = 0; k < 10; ++k) yaml += (k ? ", *" : "*") + prev;
    yaml += "]\n";
    prev = name;
  }
  return yaml;
}

}  // namespace

TEST_CASE("cairn fmt and fmt --check refuse an alias bomb as validate does") {
  TempDir dir;
  const std::string file = dir.path() + "/bomb.yaml";
  const std::string bomb = AliasBomb();
  WriteFile(file, bomb);
  for (const char* check : {"--check", ""}) {
    std::vector<std::string> argv = {CairnBinary(), "fmt"};
    if (*check) argv.push_back(check);
    argv.push_back(file);
    // Without the bound this ran for over a minute: a generous deadline,
    // and what is asserted is the diagnostic.
    ChildProcess fmt(argv, Env());
    CHECK(fmt.Wait(std::chrono::seconds(60)) == 1);
    CHECK(fmt.Stderr().find(file + ":5:5: error: aliases expand the document by more than "
                                   "100000 nodes [document_too_large]") != std::string::npos);
  }
  CHECK(ReadAll(file) == bomb);  // left as it is
  auto validate = RunCairn({"validate", dir.path()}, Env());
  CHECK(validate.exit_code == 1);
  CHECK(validate.err.find(file + ":5:5: error: aliases expand") != std::string::npos);
}

TEST_CASE("cairn fmt and validate report a NUL byte and bad UTF-8 at the byte") {
  TempDir dir;
  const std::string file = dir.path() + "/main.yaml";
  const std::string text("kind:   network\nname: ab\0x41cd\nspec: {region: \"caf\xe9\"}\n", 54);
  WriteFile(file, text);
  auto fmt = RunCairn({"fmt", file}, Env());
  CHECK(fmt.exit_code == 1);
  CHECK(fmt.err.find(file + ":2:9: error: NUL byte in the text [nul_byte]") != std::string::npos);
  CHECK(fmt.err.find(file + ":3:20: error: text is not valid UTF-8 [invalid_utf8]") !=
        std::string::npos);
  CHECK(ReadAll(file) == text);
  auto validate = RunCairn({"validate", dir.path()}, Env());
  CHECK(validate.exit_code == 1);
  CHECK(validate.err.find(file + ":2:9: error: NUL byte in the text [nul_byte]") !=
        std::string::npos);
  CHECK(validate.err.find(file + ":3:20: error: text is not valid UTF-8 [invalid_utf8]") !=
        std::string::npos);
}

TEST_CASE("the instance limit is set by --max-instances or CAIRN_MAX_INSTANCES") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: network\nname: n\ncount: 5\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n");
  CHECK(RunCairn({"validate", dir.path()}, Env()).exit_code == 0);
  auto flag = RunCairn({"validate", "--max-instances", "4", dir.path()}, Env());
  CHECK(flag.exit_code == 1);
  CHECK(flag.err.find("main.yaml:3:8: error: the stack has more than 4 resource instances "
                      "[too_many_instances]") != std::string::npos);
  auto env = Env();
  env["CAIRN_MAX_INSTANCES"] = "4";
  auto from_env = RunCairn({"validate", dir.path()}, env);
  CHECK(from_env.exit_code == 1);
  CHECK(from_env.err.find("[too_many_instances]") != std::string::npos);
  // The flag wins over the environment.
  CHECK(RunCairn({"validate", "--max-instances", "5", dir.path()}, env).exit_code == 0);
  env["CAIRN_MAX_INSTANCES"] = "lots";
  auto bad = RunCairn({"validate", dir.path()}, env);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("CAIRN_MAX_INSTANCES=lots: expected a whole number of at least 1") !=
        std::string::npos);
  CHECK(RunCairn({"validate", "--max-instances", "0", dir.path()}, Env()).exit_code != 0);
}

}  // namespace input_limits_test
