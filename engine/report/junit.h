// JUnit XML, the report every CI system reads (GitLab, Jenkins, GitHub
// Actions through its test-reporter actions): `cairn plan --junit-xml`
// (one test case per policy result) and `cairn policy test --junit-xml`
// (one test suite per file, one test case per case).
#pragma once

#include <string>
#include <vector>

#include "engine/policy/policy.h"

namespace cairn {

struct JUnitCase {
  std::string name;
  std::string classname;
  double seconds = 0;
  bool failed = false;
  bool skipped = false;
  std::string message;  // the failure's one line (or why skipped)
  std::string text;     // the failure's details, e.g. "file:line"
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

// The suites as a JUnit XML document (<testsuites> of <testsuite> of
// <testcase>, failures as <failure message="...">text</failure>), every
// string escaped (and bytes XML 1.0 cannot hold replaced), so that any
// name or message makes well-formed XML.
std::string RenderJUnitXml(const std::vector<JUnitSuite>& suites);

// The policy results of a plan as one suite ("policies"): a case per result
// named "POLICY ADDRESS", failed for a failed or erroring mandatory policy,
// and for an advisory one too (CI shows it; the exit code does not count
// it); undecided ones skipped.
JUnitSuite PolicyResultsToJUnit(const std::vector<PolicyResult>& results);

// `cairn policy test`: a suite per file, a case per test case.
std::vector<JUnitSuite> PolicyTestsToJUnit(const std::vector<PolicyTestOutcome>& outcomes);

}  // namespace cairn
