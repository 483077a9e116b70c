// docs/ci.md's pipeline, examples/ci/pipeline.sh, run as a CI system runs
// it against a real `cairn serve`: the plan job (validate, fmt --check,
// policy tests, a saved plan checked against policies, with its Markdown,
// SARIF and JUnit artifacts), the apply job applying that saved plan, and a
// plan job that a mandatory policy stops before anything is saved.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace ci_recipe_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the CI recipe of docs/ci.md: plan on the pull request, apply the saved plan") {
  StackEnv e;
  fs::remove_all(e.stack);
  const std::string src = CAIRN_SOURCE_DIR;
  fs::copy(src + "/examples/policy/stack", e.stack, fs::copy_options::recursive);
  const std::string policies = src + "/examples/policy/policies";
  const std::string out = e.dir.path() + "/artifacts";
  auto env = e.env;
  env["CAIRN"] = CairnBinary();
  auto job = [&](const std::string& name) {
    return RunCommand({"/bin/sh", src + "/examples/ci/pipeline.sh", name, e.stack, policies, out},
                      env);
  };

  auto plan = job("plan");
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(Has(plan.out, "plan: changes, saved to " + out + "/ci.plan"));
  for (const char* artifact : {"ci.plan", "plan.md", "policy.sarif", "policy.xml",
                               "policy-tests.xml", "stack-tests.xml"}) {
    CHECK(fs::exists(out + "/" + artifact));
  }
  CHECK(Has(ReadFile(out + "/plan.md"), "Policies: 3 passed"));
  CHECK(RunCommand({"/usr/bin/xmllint", "--noout", out + "/policy.xml"}).exit_code == 0);
  CHECK(Has(ReadFile(out + "/policy-tests.xml"), "failures=\"0\""));
  CHECK(Has(ReadFile(out + "/stack-tests.xml"), "tests=\"1\" failures=\"0\""));
  CHECK(e.Names("/api/v1/storage").empty());  // planning changed nothing

  auto apply = job("apply");
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  // The job's log shows the saved plan before applying it.
  CHECK(apply.out.find("Saved plan " + out + "/ci.plan, made in ") != std::string::npos);
  CHECK(e.Names("/api/v1/storage") == std::vector<std::string>{"data"});

  // A pull request that opens SSH to the world: the plan job fails, and no
  // plan is left for an apply job to apply.
  std::string main = ReadFile(e.stack + "/main.yaml");
  main.replace(main.find("default: 10.20.0.0/16"), 21, "default: 0.0.0.0/0");
  WriteFile(e.stack + "/main.yaml", main);
  fs::remove(out + "/ci.plan");
  // The stack's own test catches it first...
  auto tested = job("plan");
  CHECK(tested.exit_code == 1);
  CHECK(Has(tested.out, "  FAIL  " + e.stack + "/tests/admin.test.yaml: ssh_only_from_the_office"));
  CHECK_FALSE(fs::exists(out + "/ci.plan"));
  // ... and with that test deleted in the same pull request, the policy,
  // which the stack does not own, still does.
  fs::remove_all(e.stack + "/tests");
  auto refused = job("plan");
  CHECK(refused.exit_code == 1);
  CHECK(Has(refused.err, "a mandatory policy failed"));
  CHECK_FALSE(fs::exists(out + "/ci.plan"));
  CHECK(Has(ReadFile(out + "/policy.sarif"), "no-ssh-from-the-world"));
}

}  // namespace ci_recipe_test
