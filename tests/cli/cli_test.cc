// The CLI as users meet it: the real binary, run as a child process.
#include <catch2/catch.hpp>

#include "tests/support/process.h"

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
