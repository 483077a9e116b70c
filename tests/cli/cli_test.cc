// The CLI as users meet it: the real binary, run as a child process.
#include <catch2/catch.hpp>

#include "tests/support/process.h"

namespace cli_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

TEST_CASE("cairn --version prints the version and exits 0") {
  auto r = RunCairn({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == std::string("cairn ") + CAIRN_VERSION + "\n");
}

TEST_CASE("cairn --help lists the global options and exits 0") {
  auto r = RunCairn({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--log-level") != std::string::npos);
  CHECK(r.out.find("--no-color") != std::string::npos);
}

TEST_CASE("an unknown flag is a clear error with exit 1") {
  auto r = RunCairn({"--frobnicate"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("--frobnicate") != std::string::npos);
  CHECK(r.err.find("cairn --help") != std::string::npos);
}

TEST_CASE("an unknown command is a clear error with exit 1") {
  auto r = RunCairn({"frobnicate"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("frobnicate") != std::string::npos);
}

TEST_CASE("an unknown command says what it may have meant") {
  auto pull = RunCairn({"pull"});
  CHECK(pull.exit_code == 1);
  CHECK(pull.err ==
        "error: unknown command \"pull\"; did you mean 'cairn state pull'?\n"
        "Run 'cairn --help' for the commands.\n");
  auto typo = RunCairn({"--no-color", "plna", "x"});
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find("error: unknown command \"plna\"; did you mean 'cairn plan'?") == 0);
  auto sub = RunCairn({"state", "--log-level", "warn", "lst"});
  CHECK(sub.exit_code == 1);
  CHECK(sub.err.find("error: unknown command \"lst\" for 'cairn state'; did you mean 'cairn "
                     "state list'?") == 0);
  // Words after a command that is no group are its own arguments.
  CHECK(RunCairn({"validate", "no-such-dir"}).err.find("unknown command") == std::string::npos);
}

TEST_CASE("a stack directory named like a command is the command's argument") {
  TempDir dir;
  for (const std::string name : {"apply", "plan", "state"}) {
    WriteFile(dir.path() + "/" + name + "/net.yaml",
              "kind: network\nname: n\nspec:\n  name: n\n  region: eu-central\n"
              "  cidr: 10.0.0.0/16\n");
    auto r = RunCairn({"validate", name}, {}, "", dir.path());
    CHECK(r.exit_code == 0);
    CHECK(r.out == "Valid: 1 resource (1 network) in 1 file.\n");
    CHECK(r.err == "");
  }
}

TEST_CASE("errors have one prefix, as diagnostics do, and help shows no CLI11 leftovers") {
  auto flag = RunCairn({"plan", "--frobnicate"});
  CHECK(flag.exit_code == 1);
  CHECK(flag.err.find("error: ") == 0);
  CHECK(flag.err.find("cairn: error") == std::string::npos);
  auto both = RunCairn({"plan", "--json", "--markdown"});
  CHECK(both.exit_code == 1);
  CHECK(both.err.find("error: --json and --markdown cannot be used together") == 0);
  auto range = RunCairn({"apply", "--parallelism", "300"});
  CHECK(range.exit_code == 1);
  CHECK(range.err.find("error: --parallelism") == 0);
  for (const char* command : {"plan", "apply", "destroy", "serve"}) {
    auto help = RunCairn({command, "--help"});
    INFO(command << "\n" << help.out);
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("Excludes") == std::string::npos);
    CHECK(help.out.find("INT:") == std::string::npos);
    CHECK(help.out.find(" in [") == std::string::npos);
  }
}

TEST_CASE("the engine and the server read durations alike, and say why one is refused") {
  // The grammar is base/duration.h's, tested there; this checks both halves
  // use it and that the help of their flags states it.
  auto plan = RunCairn({"plan", "--lock-timeout", "1.5ms"});
  CHECK(plan.exit_code == 1);
  CHECK(plan.err ==
        "error: --lock-timeout: '1.5ms' is not a duration: a fraction finer than a millisecond "
        "(0.25s is 250ms; 0.0001s and 1.5ms are not whole milliseconds)\n");
  auto serve = RunCairn({"serve", "--provision-delay", "infs"});
  CHECK(serve.exit_code == 1);
  CHECK(serve.err.find("error: --provision-delay: 'infs' is not a duration") == 0);
  for (const char* command : {"plan", "apply", "serve"}) {
    INFO(command);
    auto help = RunCairn({command, "--help"});
    CHECK(help.out.find("several from the largest unit down (1h30m)") != std::string::npos);
  }
}

}  // namespace cli_test
