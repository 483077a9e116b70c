// A read token as a CI job holds one: `cairn plan` and `cairn drift` work
// with it against a real `cairn serve`, and `cairn apply` is refused by the
// server (403 token_read_only) with nothing changed. The engine never sends
// a token over plain http to a host that is not loopback.
#include <catch2/catch.hpp>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace read_token_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

TEST_CASE("a read token plans and checks drift, and cannot apply") {
  ServeFixture server;
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml",
            "kind: network\nname: core\nspec: {name: core, region: eu-central, cidr: "
            "10.50.0.0/16}\n");
  std::map<std::string, std::string> writer = {
      {"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  std::map<std::string, std::string> reader = writer;
  reader["CAIRN_TOKEN"] = kReadToken;

  auto plan = RunCairn({"plan", stack, "--detailed-exitcode"}, reader);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);  // changes to make, no error
  CHECK(plan.out.find("+ network.core") != std::string::npos);

  auto apply = RunCairn({"apply", stack, "--auto-approve"}, reader);
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code != 0);
  CHECK((apply.out + apply.err).find("token_read_only") != std::string::npos);
  CHECK((apply.out + apply.err).find(kReadToken) == std::string::npos);

  // Applied with the write token, the read token sees no drift.
  REQUIRE(RunCairn({"apply", stack, "--auto-approve"}, writer).exit_code == 0);
  auto drift = RunCairn({"drift", stack}, reader);
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 0);
  auto again = RunCairn({"plan", stack, "--detailed-exitcode"}, reader);
  CHECK(again.exit_code == 0);
}

TEST_CASE("the token is not sent over plain http to a remote host, and a CA bundle must exist") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml",
            "kind: network\nname: core\nspec: {name: core, region: eu-central, cidr: "
            "10.50.0.0/16}\n");
  // TEST-NET-1: nothing answers there, and nothing is tried.
  std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", "http://192.0.2.10:8080"}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  auto plan = RunCairn({"plan", stack}, env);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 1);
  CHECK(plan.err.find("error: refusing to send the API token over plain http to 192.0.2.10") !=
        std::string::npos);
  CHECK(plan.err.find("--insecure-http") != std::string::npos);
  CHECK(plan.err.find(kDevToken) == std::string::npos);

  ServeFixture server;
  env["CAIRN_ENDPOINT"] = server.base();
  env["CAIRN_CA_BUNDLE"] = dir.path() + "/missing-ca.pem";
  auto ca = RunCairn({"plan", stack}, env);
  INFO(ca.out << ca.err);
  CHECK(ca.exit_code == 1);
  CHECK(ca.err.find("error: the CA bundle " + dir.path() + "/missing-ca.pem") != std::string::npos);
  env.erase("CAIRN_CA_BUNDLE");
  CHECK(RunCairn({"plan", stack}, env).exit_code == 0);  // loopback http: fine
}

}  // namespace read_token_test
