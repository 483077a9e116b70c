// --policy and --sarif, shared by plan and apply: the policies of
// CAIRN_POLICY_PATH and --policy (engine/policy/policy.h) loaded, evaluated
// over the plan, shown, and written as SARIF.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "engine/policy/policy.h"

namespace cairn::cli {

struct PolicyFlags {
  std::vector<std::string> dirs;  // --policy
  std::string sarif;              // --sarif FILE
  std::string junit;              // --junit-xml FILE
};

void AddPolicyFlags(CLI::App& sub, PolicyFlags& flags);

// The policies to check: nullopt after printing their problems (a policy
// that does not load fails the command: a rule must never be skipped
// silently). An empty set when none is given.
std::optional<PolicySet> LoadPolicyFlags(const PolicyFlags& flags, const GlobalOptions& global);

// `results` written to --sarif and --junit-xml (when given); false after
// printing why not.
bool WritePolicyReports(const PolicyFlags& flags, const PolicySet& set,
                        const std::vector<PolicyResult>& results);

}  // namespace cairn::cli
