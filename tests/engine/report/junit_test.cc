// JUnit XML (engine/report/junit.h): counts, failures, escaping, and the
// suites of policy results and policy tests.
#include "engine/report/junit.h"

#include <catch2/catch.hpp>

namespace junit_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("JUnit XML counts cases and failures, and escapes every string") {
  JUnitSuite a{
      "a <suite>",
      {{"ok", "", 0.25}, {"bad & \"worse\"", "k", 0, true, false, "it's <broken>", "f.yaml:3"}}};
  JUnitSuite b{"b", {{"later", "", 0, false, true, "not decided"}}};
  std::string xml = RenderJUnitXml({a, b});
  CHECK(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cairn\" "
                  "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"0.250\">\n",
                  0) == 0);
  CHECK(Has(xml, "<testsuite name=\"a &lt;suite&gt;\" tests=\"2\" failures=\"1\""));
  CHECK(Has(xml, "<testcase name=\"ok\" classname=\"a &lt;suite&gt;\" time=\"0.250\"/>"));
  CHECK(Has(xml, "<testcase name=\"bad &amp; &quot;worse&quot;\" classname=\"k\""));
  CHECK(Has(xml, "<failure message=\"it&#39;s &lt;broken&gt;\">f.yaml:3</failure>"));
  CHECK(Has(xml, "<skipped message=\"not decided\"/>"));
  // A control character XML cannot hold does not break the document.
  std::string ctl = RenderJUnitXml({{"s", {{std::string("x\x01y"), ""}}}});
  CHECK(Has(ctl, "name=\"x\xEF\xBF\xBDy\""));
  CHECK(ctl.ends_with("</testsuites>\n"));
}

TEST_CASE("policy results and policy tests as JUnit suites") {
  PolicyResult failed;
  failed.policy = "no-ssh";
  failed.address = "firewall.open";
  failed.status = PolicyResult::Status::kFailed;
  failed.message = "SSH must not be open";
  failed.resource_location = {"stack/fw.yaml", 4, 1, 1};
  PolicyResult later = failed;
  later.address = "firewall.later";
  later.status = PolicyResult::Status::kUnknown;
  PolicyResult passed = failed;
  passed.address = "firewall.ok";
  passed.status = PolicyResult::Status::kPassed;
  passed.enforcement = PolicyConfig::Enforcement::kAdvisory;
  JUnitSuite suite = PolicyResultsToJUnit({failed, later, passed});
  REQUIRE(suite.cases.size() == 3);
  CHECK(suite.cases[0].name == "no-ssh firewall.open");
  CHECK(suite.cases[0].classname == "policies.mandatory");
  CHECK(suite.cases[0].failed);
  CHECK(suite.cases[0].text == "stack/fw.yaml:4");
  CHECK(suite.cases[1].skipped);
  CHECK_FALSE(suite.cases[2].failed);
  CHECK(suite.cases[2].classname == "policies.advisory");

  PolicyTestOutcome ok{"passes", {"a.test.yaml", 2, 1, 1}, true, {}, {}, {}};
  PolicyTestOutcome bad{"fails", {"b.test.yaml", 9, 1, 1}, false, {"x"}, {"y"}, {}};
  auto suites = PolicyTestsToJUnit({ok, bad});
  REQUIRE(suites.size() == 2);  // one per file
  CHECK(suites[1].name == "b.test.yaml");
  CHECK(suites[1].cases[0].failed);
  CHECK(suites[1].cases[0].message ==
        "failed but not expected to: x; expected to fail but did not: y");
}

}  // namespace junit_test
