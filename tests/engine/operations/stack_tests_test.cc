// `cairn test`'s files and expectations (engine/operations/stack_tests.h).
#include "engine/operations/stack_tests.h"

#include <catch2/catch.hpp>

namespace stack_tests_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("stack tests: runs read with their variables, assertions and expectations") {
  StackTests t = LoadStackTestsFromText(
      {{"a.test.yaml",
        "kind: run\nname: one\nvariables: {env: prod, n: 3, tags: [a]}\nassert:\n"
        "  - condition: ${length(volume.node) == 3}\n    error_message: three\n---\n"
        "kind: run\nname: two\ncommand: plan\nexpect_failures: [var.env, check.c]\n"},
       {"main.yaml", "kind: network\nname: not-a-test\n"}});
  REQUIRE(t.ok());
  REQUIRE(t.files.size() == 1);
  const auto& runs = t.files[0].runs;
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].apply);
  CHECK(runs[0].variables.at("n") == 3);
  CHECK(runs[0].variables.at("tags") == Value::array({"a"}));
  CHECK(runs[0].asserts[0].location.line == 5);
  CHECK_FALSE(runs[1].apply);
  CHECK(runs[1].expect_failures == std::vector<std::string>{"var.env", "check.c"});
  CHECK(ConditionExpression("${a == 1}") == "a == 1");
  CHECK_FALSE(ConditionExpression("a == 1"));
  CHECK_FALSE(ConditionExpression("x-${a}"));
}

TEST_CASE("stack tests: expected failures are matched to the diagnostics that show them") {
  auto diag = [](Severity s, std::string code, std::string summary) {
    return Diagnostic{s, std::move(code), std::move(summary), "", {}};
  };
  std::vector<Diagnostic> seen = {
      diag(Severity::kError, "invalid_variable_value",
           "invalid value for variable \"env\": env must be dev or prod."),
      diag(Severity::kWarning, "check_failed", "check small failed: too big"),
      diag(Severity::kError, "precondition_failed", "volume.data[0]: precondition failed: no"),
      diag(Severity::kError, "precondition_failed", "output ip: precondition failed: no"),
  };
  CHECK(MatchExpectedFailures({"var.env", "check.small", "volume.data", "output.ip"}, seen).ok());
  ExpectedFailures m = MatchExpectedFailures({"var.region", "check.smal"}, seen);
  CHECK(m.missing == std::vector<std::string>{"var.region", "check.smal"});
  CHECK(m.unexpected.size() == 3);  // the errors; the warning is no error
  // An address matches its instances, not another resource it prefixes.
  CHECK_FALSE(MatchExpectedFailures({"volume.dat"}, seen).missing.empty());
}

TEST_CASE("stack tests: problems in a test file are diagnostics at file:line:col") {
  StackTests t = LoadStackTestsFromText(
      {{"b.test.yaml",
        "kind: run\nname: x\ncommand: destroy\n---\nkind: override\ntarget: network.x\n"
        "values: {}\n---\n"
        "kind: run\nvariables: []\n"}});
  std::vector<std::string> got;
  for (const Diagnostic& d : t.diagnostics) {
    got.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " +
                  d.code);
  }
  CHECK(got ==
        std::vector<std::string>{"3:10 invalid_value", "6:9 invalid_value", "9:1 missing_field"});
}

TEST_CASE("stack tests: overrides give data sources fixed values, per file") {
  StackTests t = LoadStackTestsFromText(
      {{"a.test.yaml",
        "kind: override\ntarget: data.network.shared\nvalues: {id: n-1, cidr: 10.0.0.0/8}\n---\n"
        "kind: run\nname: r\n"}});
  REQUIRE(t.ok());
  REQUIRE(t.files.size() == 1);
  CHECK(t.files[0].overrides.at("data.network.shared") ==
        Value({{"id", "n-1"}, {"cidr", "10.0.0.0/8"}}));
  CHECK(t.files[0].override_locations.at("data.network.shared").line == 2);
}

TEST_CASE("stack tests: a kind test document sets the file's provisioning delay, once") {
  StackTests t = LoadStackTestsFromText(
      {{"a.test.yaml", "kind: test\nprovision_delay: 1.5s\n---\nkind: run\nname: r\n"},
       {"b.test.yaml", "kind: run\nname: r\n"}});
  REQUIRE(t.ok());
  CHECK(t.files[0].provision_delay == std::chrono::milliseconds(1500));
  CHECK(t.files[0].settings_location.line == 1);
  CHECK(t.files[1].provision_delay == std::chrono::milliseconds(0));

  StackTests bad =
      LoadStackTestsFromText({{"c.test.yaml",
                               "kind: test\nprovision_delay: 5 minutes\nprovision_dela: 1s\n---\n"
                               "kind: test\n---\nkind: run\nname: r\n"}});
  std::vector<std::string> got;
  for (const Diagnostic& d : bad.diagnostics) {
    got.push_back(std::to_string(d.location.line) + " " + d.code + " " + d.detail);
  }
  REQUIRE(got.size() == 3);
  CHECK(got[0].starts_with("2 invalid_value"));
  CHECK(got[1] == "3 unknown_field did you mean \"provision_delay\"?");
  CHECK(got[2].starts_with("5 invalid_test"));
  CHECK(bad.diagnostics[2].summary.find("the first is at line 1") != std::string::npos);
}

}  // namespace stack_tests_test
