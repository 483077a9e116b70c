// Policy as code end to end: examples/policy through the real `cairn`
// against a real `cairn serve`: a passing plan, a mandatory violation that
// fails the plan (nothing saved) and refuses the apply (nothing sent), an
// advisory one that only warns, CAIRN_POLICY_PATH, a saved plan checked
// again with the policies given at apply, the SARIF log, and a policy that
// does not load stopping everything.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace policy_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

// libxml2-utils' parser (scripts/test.sh installs it): the JUnit reports
// must be well-formed XML.
constexpr const char* kXmllint = "/usr/bin/xmllint";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("policies: mandatory fails plan and apply, advisory warns, saved plans re-checked") {
  StackEnv e;
  fs::remove_all(e.stack);
  const std::string example = std::string(CAIRN_SOURCE_DIR) + "/examples/policy";
  fs::copy(example + "/stack", e.stack, fs::copy_options::recursive);
  const std::string policies = example + "/policies";
  const std::string plan_file = e.dir.path() + "/saved.plan";
  const std::string sarif = e.dir.path() + "/policy.sarif";

  auto ok = e.Cairn({"plan", e.stack, "--policy", policies});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(Has(ok.out, "Policies: 3 passed, 0 mandatory failed, 0 advisory failed, 0 not decided.\n"));

  // Mandatory: exit 1, the plan is not saved, the SARIF log names the rule
  // at the firewall's manifest line.
  const std::string html = e.dir.path() + "/plan.html";
  auto open =
      e.Cairn({"plan", e.stack, "--policy", policies, "--var", "ssh_from=0.0.0.0/0", "--out",
               plan_file, "--sarif", sarif, "--detailed-exitcode", "--html", html});
  CHECK(open.exit_code == 1);
  CHECK(Has(open.out,
            "  ✗ no-ssh-from-the-world [mandatory] (firewall.admin): SSH must not be open to the "
            "world.\n"));
  CHECK(Has(open.err, "the plan was not saved"));
  CHECK_FALSE(fs::exists(plan_file));
  // The review page shows the results too.
  const std::string page = ReadFile(html);
  CHECK(Has(page, "<table id=\"policies\">"));
  CHECK(Has(page,
            "<tr class=\"policy-failed\"><td><code>no-ssh-from-the-world</code></td>"
            "<td><code>firewall.admin</code></td>"));
  json log = json::parse(ReadFile(sarif));
  CHECK(log["version"] == "2.1.0");
  REQUIRE(log["runs"][0]["results"].size() == 1);
  const json& result = log["runs"][0]["results"][0];
  CHECK(result["ruleId"] == "no-ssh-from-the-world");
  CHECK(result["level"] == "error");
  const json& where = result["locations"][0]["physicalLocation"];
  CHECK(where["artifactLocation"]["uri"] == e.stack + "/main.yaml");
  CHECK(where["region"]["startLine"] == 12);  // the firewall document

  // The apply refuses before sending anything.
  auto refused = e.Cairn(
      {"apply", e.stack, "--auto-approve", "--policy", policies, "--var", "ssh_from=0.0.0.0/0"});
  CHECK(refused.exit_code == 1);
  CHECK(Has(refused.err, "error: a mandatory policy failed: nothing was applied"));
  CHECK(e.Names("/api/v1/storage").empty());

  // Advisory: a warning in the output, the plan goes on.
  auto big = e.Cairn({"plan", e.stack, "--policy", policies, "--var", "data_gb=500", "--json"});
  CHECK(big.exit_code == 0);
  json plan = json::parse(big.out);
  bool warned = false;
  for (const json& r : plan["policy_results"]) {
    if (r["policy"] == "small-volumes") {
      warned = r["status"] == "failed" && r["enforcement"] == "advisory" &&
               r["address"] == "volume.data";
    }
  }
  CHECK(warned);

  // A plan saved without policies is checked with those given at apply.
  auto saved = e.Cairn({"plan", e.stack, "--var", "ssh_from=0.0.0.0/0", "--out", plan_file});
  REQUIRE(saved.exit_code == 0);
  auto checked = e.Cairn({"apply", plan_file, e.stack, "--policy", policies});
  CHECK(checked.exit_code == 1);
  CHECK(Has(checked.out, "no-ssh-from-the-world"));
  CHECK(e.Names("/api/v1/storage").empty());

  // From the environment, passing: applied.
  e.env["CAIRN_POLICY_PATH"] = policies;
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.err);
  CHECK(applied.exit_code == 0);
  CHECK(Has(applied.out, "Policies: 3 passed"));
  CHECK(e.Names("/api/v1/storage") == std::vector<std::string>{"data"});
}

TEST_CASE("policies: one that does not load stops the command before any request") {
  StackEnv e;
  const std::string dir = e.dir.path() + "/broken";
  WriteFile(dir + "/rules.yaml",
            "kind: policy\nname: x\ncondition: ${change.after.size_gb >}\nerror_message: m\n");
  auto r = e.Cairn({"apply", e.stack, "--auto-approve", "--policy", dir});
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err, "rules.yaml:3:36: error: condition: expected an expression, found \"}\""));
  CHECK(Has(r.err, "[invalid_expression]"));
  CHECK(Has(r.err, "the policies above do not load"));
  auto missing = e.Cairn({"plan", e.stack, "--policy", e.dir.path() + "/nowhere"});
  CHECK(missing.exit_code == 1);
  CHECK(Has(missing.err, "no such directory"));
  CHECK(e.Names("/api/v1/compute").empty());
}

TEST_CASE("policies: `cairn policy test` runs a directory's cases, with JUnit XML") {
  TempDir dir;
  const std::string example = std::string(CAIRN_SOURCE_DIR) + "/examples/policy/policies";
  const std::string junit = dir.path() + "/tests.xml";
  auto ok = RunCairn({"policy", "test", example, "--junit-xml", junit}, {});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(Has(ok.out, "5 passed, 0 failed (3 policies).\n"));
  auto parsed = RunCommand({kXmllint, "--noout", junit});
  INFO(parsed.err);
  CHECK(parsed.exit_code == 0);  // well-formed XML
  CHECK(Has(ReadFile(junit), "<testsuite name=\"" + example +
                                 "/rules.test.yaml\" tests=\"5\" "
                                 "failures=\"0\""));

  // A case whose expectation is wrong fails, in the output and the report.
  fs::copy(example, dir.path() + "/p", fs::copy_options::recursive);
  WriteFile(dir.path() + "/p/wrong.test.yaml",
            "kind: policy_test\nname: a big volume passes\nchanges:\n"
            "  - {address: volume.big, after: {size_gb: 900}}\n");
  auto bad = RunCairn({"policy", "test", dir.path() + "/p", "--junit-xml", junit}, {});
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.out, "  FAIL  " + dir.path() + "/p/wrong.test.yaml:2: a big volume passes\n"));
  CHECK(Has(bad.out, "failed but not expected to: small-volumes"));
  CHECK(Has(ReadFile(junit), "<failure message=\"failed but not expected to: small-volumes\">"));
  CHECK(RunCommand({kXmllint, "--noout", junit}).exit_code == 0);

  // No test at all is an error, not a pass.
  auto none = RunCairn({"policy", "test", dir.path()}, {});
  CHECK(none.exit_code == 1);
  CHECK(Has(none.err, "no policy tests"));
}

TEST_CASE("policies: plan --junit-xml writes a test case per policy result") {
  StackEnv e;
  fs::remove_all(e.stack);
  const std::string example = std::string(CAIRN_SOURCE_DIR) + "/examples/policy";
  fs::copy(example + "/stack", e.stack, fs::copy_options::recursive);
  const std::string junit = e.dir.path() + "/plan.xml";
  auto r = e.Cairn({"plan", e.stack, "--policy", example + "/policies", "--var", "data_gb=500",
                    "--junit-xml", junit});
  CHECK(r.exit_code == 0);  // advisory only
  std::string xml = ReadFile(junit);
  CHECK(RunCommand({kXmllint, "--noout", junit}).exit_code == 0);
  CHECK(Has(xml, "tests=\"3\" failures=\"1\""));
  CHECK(Has(xml, "<testcase name=\"small-volumes volume.data\" classname=\"policies.advisory\""));
}

}  // namespace policy_test
