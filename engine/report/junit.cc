#include "engine/report/junit.h"

#include <cstdio>
#include <map>

#include "engine/report/html_escape.h"

namespace cairn {
namespace {

// `s` escaped for an XML attribute or text.
std::string Xml(const std::string& s) { return HtmlEscape(s, /*xml_controls=*/true); }

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

std::string RenderJUnitXml(const std::vector<JUnitSuite>& suites) {
  size_t tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  for (const JUnitSuite& suite : suites) {
    size_t f = 0, sk = 0;
    double t = 0;
    std::string cases;
    for (const JUnitCase& c : suite.cases) {
      f += c.failed;
      sk += c.skipped && !c.failed;
      t += c.seconds;
      cases += "    <testcase name=\"" + Xml(c.name) + "\" classname=\"" +
               Xml(c.classname.empty() ? suite.name : c.classname) + "\" time=\"" +
               Seconds(c.seconds) + "\"";
      if (c.failed) {
        cases += ">\n      <failure message=\"" + Xml(c.message) + "\">" + Xml(c.text) +
                 "</failure>\n    </testcase>\n";
      } else if (c.skipped) {
        cases += ">\n      <skipped message=\"" + Xml(c.message) + "\"/>\n    </testcase>\n";
      } else {
        cases += "/>\n";
      }
    }
    tests += suite.cases.size();
    failures += f;
    skipped += sk;
    seconds += t;
    body += "  <testsuite name=\"" + Xml(suite.name) + "\" tests=\"" +
            std::to_string(suite.cases.size()) + "\" failures=\"" + std::to_string(f) +
            "\" errors=\"0\" skipped=\"" + std::to_string(sk) + "\" time=\"" + Seconds(t) +
            "\">\n" + cases + "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cairn\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + Seconds(seconds) +
         "\">\n" + body + "</testsuites>\n";
}

JUnitSuite PolicyResultsToJUnit(const std::vector<PolicyResult>& results) {
  JUnitSuite suite{"policies", {}};
  for (const PolicyResult& r : results) {
    JUnitCase c;
    c.name = r.policy + (r.address.empty() ? "" : " " + r.address);
    c.classname = std::string("policies.") + EnforcementName(r.enforcement);
    c.failed =
        r.status == PolicyResult::Status::kFailed || r.status == PolicyResult::Status::kError;
    c.skipped = r.status == PolicyResult::Status::kUnknown;
    c.message = r.message;
    const SourceLocation& at =
        r.resource_location.file.empty() ? r.policy_location : r.resource_location;
    if (!at.file.empty()) {
      c.text = at.file + (at.has_position() ? ":" + std::to_string(at.line) : "");
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

std::vector<JUnitSuite> PolicyTestsToJUnit(const std::vector<PolicyTestOutcome>& outcomes) {
  std::vector<JUnitSuite> suites;
  std::map<std::string, size_t> by_file;
  for (const PolicyTestOutcome& o : outcomes) {
    auto [it, fresh] = by_file.emplace(o.location.file, suites.size());
    if (fresh) suites.push_back({o.location.file, {}});
    JUnitCase c;
    c.name = o.name;
    c.failed = !o.passed;
    c.message = o.Message();
    c.text = o.location.file + ":" + std::to_string(o.location.line);
    suites[it->second].cases.push_back(std::move(c));
  }
  return suites;
}

}  // namespace cairn
