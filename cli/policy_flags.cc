#include "cli/policy_flags.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "base/env.h"
#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/report/junit.h"

namespace cairn::cli {

void AddPolicyFlags(CLI::App& sub, PolicyFlags& flags) {
  sub.add_option("--policy", flags.dirs,
                 "Check the plan against the `kind: policy` documents in DIR (repeatable; also "
                 "the directories of CAIRN_POLICY_PATH, colon-separated): a failed mandatory "
                 "policy fails the command, an advisory one is a warning (docs/policy.md)")
      ->type_name("DIR")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--sarif", flags.sarif,
                 "Also write the policy results as a SARIF 2.1.0 log to FILE, each violation at "
                 "the resource's manifest file:line (for code-scanning annotations)")
      ->type_name("FILE");
  sub.add_option("--junit-xml", flags.junit,
                 "Also write the policy results as JUnit XML to FILE (a test case per policy "
                 "and resource; advisory failures show as failures too)")
      ->type_name("FILE");
}

std::optional<PolicySet> LoadPolicyFlags(const PolicyFlags& flags, const GlobalOptions& global) {
  std::vector<std::string> dirs = PolicyDirs(std::getenv("CAIRN_POLICY_PATH"), flags.dirs);
  PolicySet set = LoadPolicies(dirs, PosixEnv());
  if (!set.diagnostics.empty()) {
    std::cerr << RenderDiagnostics(set.diagnostics, set.sources,
                                   {.color = UseColor(global, STDERR_FILENO)});
  }
  if (!set.ok()) {
    std::cerr << "error: the policies above do not load; nothing was planned or applied\n";
    return std::nullopt;
  }
  return set;
}

bool WritePolicyReports(const PolicyFlags& flags, const PolicySet& set,
                        const std::vector<PolicyResult>& results) {
  if (!flags.sarif.empty()) {
    const std::string text =
        Redact(PolicyResultsToSarif(results, set.policies, CAIRN_VERSION).dump(2)) + "\n";
    if (Status st = PosixEnv().WriteFileAtomically(flags.sarif, text, {.mode = 0644}); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return false;
    }
  }
  if (!flags.junit.empty()) {
    const std::string text = Redact(RenderJUnitXml({PolicyResultsToJUnit(results)}));
    if (Status st = PosixEnv().WriteFileAtomically(flags.junit, text, {.mode = 0644}); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace cairn::cli
