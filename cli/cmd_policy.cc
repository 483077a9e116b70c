// cairn policy test: a policy directory's own test cases (docs/policy.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/env.h"
#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/policy/policy.h"
#include "engine/report/junit.h"

namespace cairn::cli {
namespace {

struct PolicyTestFlags {
  std::vector<std::string> dirs;
  std::string junit;
  bool json = false;
};

int RunPolicyTestCommand(const PolicyTestFlags& f, const GlobalOptions& global) {
  const std::vector<std::string> dirs = f.dirs.empty() ? std::vector<std::string>{"."} : f.dirs;
  const bool color = UseColor(global, STDERR_FILENO);
  PolicySet policies = LoadPolicies(dirs, PosixEnv());
  PolicyTestSet tests = LoadPolicyTests(dirs, PosixEnv());
  if (!policies.diagnostics.empty()) {
    std::cerr << RenderDiagnostics(policies.diagnostics, policies.sources, {.color = color});
  }
  if (!tests.diagnostics.empty()) {
    std::cerr << RenderDiagnostics(tests.diagnostics, tests.sources, {.color = color});
  }
  if (!policies.ok() || !tests.ok()) {
    std::cerr << "error: the files above do not load; no test was run\n";
    return 1;
  }
  if (tests.cases.empty()) {
    std::cerr << "error: no policy tests (kind: policy_test documents in *.test.yaml files) in "
              << dirs.front() << (dirs.size() > 1 ? " and the others" : "") << "\n";
    return 1;
  }
  const std::vector<PolicyTestOutcome> outcomes = RunPolicyTests(policies.policies, tests.cases);
  size_t failed = 0;
  Value json = Value::array();
  for (const PolicyTestOutcome& o : outcomes) {
    failed += !o.passed;
    if (f.json) {
      Value j = {{"name", o.name},
                 {"file", o.location.file},
                 {"line", o.location.line},
                 {"passed", o.passed}};
      if (!o.passed) j["message"] = o.Message();
      json.push_back(std::move(j));
      continue;
    }
    std::cout << (o.passed ? "  pass  " : "  FAIL  ") << o.location.file << ":" << o.location.line
              << ": " << o.name << "\n";
    if (!o.passed) std::cout << "        " << o.Message() << "\n";
  }
  if (!f.junit.empty()) {
    if (Status st = PosixEnv().WriteFileAtomically(
            f.junit, Redact(RenderJUnitXml(PolicyTestsToJUnit(outcomes))), {.mode = 0644});
        !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
  }
  if (f.json) {
    std::cout
        << Redact(Value({{"tests", json}, {"passed", outcomes.size() - failed}, {"failed", failed}})
                      .dump(2))
        << "\n";
  } else {
    std::cout << outcomes.size() - failed << " passed, " << failed << " failed ("
              << policies.policies.size() << " policies).\n";
  }
  return failed == 0 ? 0 : 1;
}

std::function<int()> SetupPolicy(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<PolicyTestFlags>();
  auto which = std::make_shared<std::function<int()>>();
  sub.require_subcommand(1);
  CLI::App* test = sub.add_subcommand(
      "test",
      "Run a policy directory's own test cases (*.test.yaml): a plan fragment in, the "
      "expected failures out");
  test->add_option("DIR", f->dirs, "Policy directories (default: .)");
  test->add_option("--junit-xml", f->junit,
                   "Also write the results as JUnit XML to FILE (a test suite per file)")
      ->type_name("FILE");
  test->add_flag("--json", f->json, "Print the results as JSON");
  test->callback(
      [which, f, &global] { *which = [f, &global] { return RunPolicyTestCommand(*f, global); }; });
  test->footer(
      "A *.test.yaml file holds `kind: policy_test` documents (docs/policy.md, Testing\n"
      "policies). A case passes when exactly the policies it expects to fail fail.\n"
      "Exit 0 when every case passes, 1 otherwise.\n\n"
      "Examples:\n"
      "  cairn policy test examples/policy/policies\n"
      "  cairn policy test policies/ --junit-xml policy-tests.xml");
  sub.footer("Example:\n  cairn policy test examples/policy/policies");
  return [which] { return (*which)(); };
}

}  // namespace

CAIRN_COMMAND("policy", "Test policy as code (docs/policy.md)", 59, SetupPolicy);

}  // namespace cairn::cli
