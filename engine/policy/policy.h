// Policy as code (docs/policy.md): `kind: policy` documents, kept in
// directories owned by whoever owns the rules rather than by the stack
// (`--policy DIR`, CAIRN_POLICY_PATH), each a condition over a plan:
//
//   kind: policy
//   name: no-ssh-from-the-world
//   enforcement: mandatory        # or advisory
//   resource_kind: firewall       # optional: once per planned change of that kind
//   condition: ${alltrue([for r in change.after.rules : !(r.port == "22")])}
//   error_message: SSH must not be open to the world.
//
// A policy with `resource_kind` is evaluated once per planned change of that
// kind (every action but delete, or those `actions:` lists), with `change.address`,
// `change.action`, `change.before` and `change.after`; one without, once per plan, with
// `plan.changes` (a list of those objects) and `plan.summary`. Values known
// only after apply stay unknown: a condition that depends on one is
// `unknown`, neither passed nor failed. The condition is parsed once, when
// the policies are loaded, by the one expression language (engine/expr).
//
// Nothing here reads the API or the state: LoadPolicies reads files,
// EvaluatePolicies is a function of the policies and the plan.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/env.h"
#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/plan/plan.h"

namespace cairn {

namespace expr {
struct Node;
}

struct PolicyConfig {
  enum class Enforcement { kMandatory, kAdvisory };
  std::string name;
  Enforcement enforcement = Enforcement::kMandatory;
  std::string resource_kind;  // "": once per plan
  // With resource_kind: the actions of the changes it judges (`actions:`);
  // by default every one but delete, whose `change.after` is null.
  std::set<Action> actions = {Action::kCreate, Action::kUpdate, Action::kReplace, Action::kNoOp};
  std::string condition;  // the text as written
  std::string error_message;
  std::shared_ptr<const expr::Node> parsed;  // `condition`, parsed
  SourceLocation location;                   // the document's `name`
};

struct PolicySet {
  std::vector<PolicyConfig> policies;  // in file order, then document order
  std::vector<Diagnostic> diagnostics;
  SourceFiles sources;  // every file read, for diagnostics' excerpts
  bool ok() const { return !HasErrors(diagnostics); }
};

// Every `*.yaml`/`*.yml` of each directory (not its subdirectories; not the
// `*.test.yaml` files of `cairn policy test`), in name order. A directory
// that does not exist, a document that is not a policy, a missing or
// unknown key, a duplicate name or a condition that does not parse is an
// error diagnostic at file:line:col; all of them are reported at once.
PolicySet LoadPolicies(const std::vector<std::string>& dirs, const Env& env);
// The same from texts (tests): file name -> content, read in name order.
PolicySet LoadPoliciesFromText(const std::map<std::string, std::string>& files);

// The directories CAIRN_POLICY_PATH names (colon-separated, empty parts
// skipped), then `flags` (--policy, in order), each once.
std::vector<std::string> PolicyDirs(const char* env_value, const std::vector<std::string>& flags);

struct PolicyResult {
  enum class Status { kPassed, kFailed, kUnknown, kError };
  std::string policy;
  PolicyConfig::Enforcement enforcement = PolicyConfig::Enforcement::kMandatory;
  std::string address;  // the change's; "" for a plan-wide policy
  Status status = Status::kPassed;
  std::string message;               // why it failed, or could not be evaluated
  SourceLocation policy_location;    // the policy document
  SourceLocation resource_location;  // the resource's manifest document, when known
};

// Every policy over `plan`: one result per policy and change it applies to
// (per plan for a policy without resource_kind), in policy order then plan
// order. `config` (may be null: a saved plan applied without its manifests
// gives no locations) says where each resource is written. The values of
// sensitive variables (Plan::sensitive_values) never appear in a message.
std::vector<PolicyResult> EvaluatePolicies(const std::vector<PolicyConfig>& policies,
                                           const Plan& plan, const StackConfig* config);

// The per-change policies (with resource_kind) that apply to `change`,
// evaluated with its values as they are now known (`after`, residuals
// resolved): what apply checks before it sends the change.
std::vector<PolicyResult> EvaluateChangePolicies(const std::vector<PolicyConfig>& policies,
                                                 const PlannedChange& change, const Value& after,
                                                 const std::vector<std::string>& secrets);

// Whether a mandatory policy failed or could not be evaluated: the plan
// fails and apply refuses.
bool MandatoryViolated(const std::vector<PolicyResult>& results);

const char* PolicyStatusName(PolicyResult::Status status);
const char* EnforcementName(PolicyConfig::Enforcement enforcement);

// The results as JSON (`policy_results` in `cairn plan --json`), as text for
// people (one line per failure, a count of the rest), and as a SARIF 2.1.0
// log (--sarif) with one result per violation located at the resource's
// manifest file:line (code-scanning UIs annotate the pull request there).
Value PolicyResultsToJson(const std::vector<PolicyResult>& results);
std::string RenderPolicyText(const std::vector<PolicyResult>& results);
Value PolicyResultsToSarif(const std::vector<PolicyResult>& results,
                           const std::vector<PolicyConfig>& policies, const std::string& version);

// `cairn policy test DIR`: a policy directory's own cases, in its
// `*.test.yaml` files, so that policy authors can test their rules:
//
//   kind: policy_test
//   name: ssh from the world is refused
//   changes:                        # a plan fragment
//     - address: firewall.open
//       action: create              # create (default), update, replace, delete, no-op
//       after: {rules: [{port: "22", source: 0.0.0.0/0}]}
//       before: {...}               # optional
//   expect_failures: [no-ssh-from-the-world]   # default: none
//
// A string "${...}" in `after` stands for a value known only after apply.
// A case passes when the policies that fail (or cannot be evaluated) are
// exactly those it expects, whatever their enforcement.
struct PolicyTestCase {
  std::string name;
  Plan plan;
  std::set<std::string> expect_failures;
  SourceLocation location;  // the document's `name`
};

struct PolicyTestSet {
  std::vector<PolicyTestCase> cases;
  std::vector<Diagnostic> diagnostics;
  SourceFiles sources;
  bool ok() const { return !HasErrors(diagnostics); }
};

// The `*.test.yaml` cases of `dirs` (not their subdirectories), in name
// order; every problem a diagnostic at file:line:col, all at once.
PolicyTestSet LoadPolicyTests(const std::vector<std::string>& dirs, const Env& env);
PolicyTestSet LoadPolicyTestsFromText(const std::map<std::string, std::string>& files);

struct PolicyTestOutcome {
  std::string name;
  SourceLocation location;
  bool passed = false;
  std::vector<std::string> unexpected;        // failed, not expected to
  std::vector<std::string> missing;           // expected to fail, did not
  std::vector<std::string> unknown_expected;  // expected, but named by no policy loaded
  std::string Message() const;                // why it did not pass ("" when it did)
};

std::vector<PolicyTestOutcome> RunPolicyTests(const std::vector<PolicyConfig>& policies,
                                              const std::vector<PolicyTestCase>& cases);

}  // namespace cairn
