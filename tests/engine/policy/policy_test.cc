// Policy as code (engine/policy/policy.h): loading `kind: policy`
// documents with diagnostics at file:line:col, evaluating them over a plan
// (per change of a kind, or over the whole plan; unknown values undecided),
// and the JSON, text and SARIF forms of the results.
#include "engine/policy/policy.h"

#include <catch2/catch.hpp>

#include "engine/manifest/expr.h"

namespace policy_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

constexpr const char* kPolicies =
    "kind: policy\n"
    "name: no-ssh-from-the-world\n"
    "resource_kind: firewall\n"
    "condition: '${alltrue([for r in change.after.rules : !(r.port == \"22\" && r.source == "
    "\"0.0.0.0/0\")])}'\n"
    "error_message: SSH must not be open to the world.\n"
    "---\n"
    "kind: policy\n"
    "name: small-volumes\n"
    "enforcement: advisory\n"
    "resource_kind: volume\n"
    "condition: ${change.after.size_gb <= 100}\n"
    "error_message: volumes over 100 GB need a review\n"
    "---\n"
    "kind: policy\n"
    "name: few-destroys\n"
    "condition: ${plan.summary.destroy <= 1}\n"
    "error_message: more than one destroy in one plan\n";

PlannedChange Change(const std::string& addr, Action action, Value after, Value before = nullptr) {
  PlannedChange c;
  c.address = addr;
  c.parsed_address = *ResourceAddress::Parse(addr);
  c.kind = c.parsed_address.kind;
  c.action = action;
  c.after = std::move(after);
  c.before = std::move(before);
  return c;
}

Value Rule(const std::string& port, const std::string& source) {
  return {{"direction", "inbound"}, {"protocol", "tcp"}, {"port", port}, {"source", source}};
}

std::vector<std::string> Summaries(const std::vector<PolicyResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    out.push_back(r.policy + " " + r.address + " " + PolicyStatusName(r.status));
  }
  return out;
}

}  // namespace

TEST_CASE("policies are evaluated per change of their kind and over the whole plan") {
  PolicySet set = LoadPoliciesFromText({{"policies/rules.yaml", kPolicies}});
  INFO((set.diagnostics.empty() ? std::string() : set.diagnostics[0].summary));
  REQUIRE(set.ok());
  REQUIRE(set.policies.size() == 3);
  CHECK(set.policies[1].enforcement == PolicyConfig::Enforcement::kAdvisory);
  CHECK(set.policies[0].location.line == 2);

  Plan plan;
  plan.changes.push_back(
      Change("firewall.open", Action::kCreate,
             {{"name", "open"}, {"rules", Value::array({Rule("22", "0.0.0.0/0")})}}));
  plan.changes.push_back(
      Change("firewall.office", Action::kUpdate,
             {{"name", "office"}, {"rules", Value::array({Rule("22", "10.0.0.0/8")})}}));
  plan.changes.push_back(
      Change("volume.big", Action::kCreate, {{"name", "big"}, {"size_gb", 500}}));
  // Known only after apply: neither passed nor failed.
  plan.changes.push_back(Change("volume.later", Action::kCreate,
                                {{"name", "later"}, {"size_gb", "${var_size.later.n}"}}));
  plan.changes.push_back(Change("network.a", Action::kDelete, nullptr, {{"name", "a"}}));
  plan.changes.push_back(Change("network.b", Action::kDelete, nullptr, {{"name", "b"}}));

  StackConfig config;
  ResourceConfig open;
  open.address = *ResourceAddress::Parse("firewall.open");
  open.kind = "firewall";
  open.location = {"stack/fw.yaml", 12, 1, 1};
  config.resources.push_back(open);
  config.resource_index.clear();

  auto results = EvaluatePolicies(set.policies, plan, &config);
  CHECK(Summaries(results) == std::vector<std::string>{
                                  "no-ssh-from-the-world firewall.open failed",
                                  "no-ssh-from-the-world firewall.office passed",
                                  "small-volumes volume.big failed",
                                  "small-volumes volume.later unknown",
                                  "few-destroys  failed",
                              });
  CHECK(results[0].message == "SSH must not be open to the world.");
  CHECK(results[0].resource_location.file == "stack/fw.yaml");
  CHECK(results[0].resource_location.line == 12);
  CHECK(MandatoryViolated(results));

  // Advisory failures alone do not fail the plan.
  std::vector<PolicyResult> advisory = {results[2], results[3]};
  CHECK_FALSE(MandatoryViolated(advisory));

  Value json = PolicyResultsToJson(results);
  REQUIRE(json.size() == 5);
  CHECK(json[0]["status"] == "failed");
  CHECK(json[0]["enforcement"] == "mandatory");
  CHECK(json[0]["location"] == "stack/fw.yaml:12");
  CHECK(json[2]["enforcement"] == "advisory");
  CHECK_FALSE(json[1].contains("message"));

  std::string text = RenderPolicyText(results);
  CHECK(text.rfind("Policies: 1 passed, 2 mandatory failed, 1 advisory failed, 1 not decided.\n",
                   0) == 0);
  CHECK(text.find("no-ssh-from-the-world [mandatory] (firewall.open): SSH must not be open") !=
        std::string::npos);
}

TEST_CASE("a policy's SARIF log locates each violation at the resource's manifest") {
  PolicySet set = LoadPoliciesFromText({{"p.yaml", kPolicies}});
  REQUIRE(set.ok());
  Plan plan;
  plan.changes.push_back(Change("volume.big", Action::kCreate, {{"size_gb", 500}}));
  StackConfig config;
  ResourceConfig big;
  big.address = *ResourceAddress::Parse("volume.big");
  big.kind = "volume";
  big.location = {"stack/disks.yaml", 4, 3, 1};
  config.resources.push_back(big);
  Value sarif =
      PolicyResultsToSarif(EvaluatePolicies(set.policies, plan, &config), set.policies, "1.2.3");
  CHECK(sarif["version"] == "2.1.0");
  const Value& run = sarif["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "cairn");
  CHECK(run["tool"]["driver"]["version"] == "1.2.3");
  CHECK(run["tool"]["driver"]["rules"].size() == 3);
  REQUIRE(run["results"].size() == 1);  // passed results are not listed
  const Value& r = run["results"][0];
  CHECK(r["ruleId"] == "small-volumes");
  CHECK(r["ruleIndex"] == 1);
  CHECK(r["level"] == "warning");  // advisory
  CHECK(r["message"]["text"] == "volume.big: volumes over 100 GB need a review");
  const Value& loc = r["locations"][0]["physicalLocation"];
  CHECK(loc["artifactLocation"]["uri"] == "stack/disks.yaml");
  CHECK(loc["region"]["startLine"] == 4);
  CHECK(loc["region"]["startColumn"] == 3);
}

TEST_CASE("policy documents are checked at load, every problem at its file:line:col") {
  PolicySet set = LoadPoliciesFromText(
      {{"a.yaml",
        "kind: policy\nname: one\ncondition: ${change.after.x ==}\nerror_message: m\n---\n"
        "kind: policy\nname: two\ncondition: ${true}\nerror_message: m\nenforcment: advisory\n"
        "---\n"
        "kind: policy\nname: three\ncondition: ${true}\nerror_message: m\n"
        "enforcement: sometimes\n---\n"
        "kind: network\nname: n\n---\n"
        "kind: policy\nname: four\nerror_message: m\n"},
       {"b.yaml", "kind: policy\nname: one\ncondition: ${true}\nerror_message: again\n"},
       {"b.test.yaml", "this is a test file: never read as a policy"}});
  std::vector<std::string> got;
  for (const Diagnostic& d : set.diagnostics) {
    got.push_back(d.location.file + ":" + std::to_string(d.location.line) + ":" +
                  std::to_string(d.location.column) + " " + d.code);
  }
  CHECK(got == std::vector<std::string>{
                   "a.yaml:3:31 invalid_expression",  // under the "}" an operand should precede
                   "a.yaml:10:1 unknown_field",
                   "a.yaml:16:14 invalid_value",
                   "a.yaml:18:7 invalid_policy",
                   "a.yaml:21:1 missing_field",
                   "b.yaml:2:7 duplicate_policy",
               });
  CHECK(set.diagnostics[1].detail == "did you mean \"enforcement\"?");
}

TEST_CASE("a condition that reads what a policy has not, or is not a bool, is an error") {
  PolicySet set = LoadPoliciesFromText(
      {{"p.yaml",
        "kind: policy\nname: reads-var\ncondition: ${var.x == 1}\nerror_message: m\n---\n"
        "kind: policy\nname: not-bool\nresource_kind: volume\ncondition: ${change.address}\n"
        "error_message: m\n"}});
  REQUIRE(set.ok());
  Plan plan;
  plan.changes.push_back(Change("volume.a", Action::kCreate, {{"size_gb", 1}}));
  auto results = EvaluatePolicies(set.policies, plan, nullptr);
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == PolicyResult::Status::kError);
  CHECK(results[0].message.rfind("the condition cannot be evaluated: ", 0) == 0);
  CHECK(results[1].status == PolicyResult::Status::kError);
  CHECK(results[1].message == "the condition must be true or false");
  CHECK(MandatoryViolated(results));  // a mandatory policy that cannot be evaluated fails closed
}

TEST_CASE("a per-change policy judges every action but delete, unless `actions` says which") {
  PolicySet set = LoadPoliciesFromText(
      {{"p.yaml",
        "kind: policy\nname: sizes\nresource_kind: volume\n"
        "condition: ${change.after.size_gb < 100}\nerror_message: m\n---\n"
        "kind: policy\nname: keep-data\nresource_kind: volume\nactions: [delete, replace]\n"
        "condition: ${change.address != \"volume.data\"}\nerror_message: data stays\n"}});
  REQUIRE(set.ok());
  Plan plan;
  plan.changes.push_back(Change("volume.small", Action::kUpdate, {{"size_gb", 5}}));
  plan.changes.push_back(Change("volume.data", Action::kDelete, nullptr, {{"size_gb", 500}}));
  plan.changes.push_back(Change("volume.same", Action::kNoOp, {{"size_gb", 200}}));
  CHECK(Summaries(EvaluatePolicies(set.policies, plan, nullptr)) ==
        std::vector<std::string>{"sizes volume.small passed", "sizes volume.same failed",
                                 "keep-data volume.data failed"});

  PolicySet bad = LoadPoliciesFromText(
      {{"b.yaml",
        "kind: policy\nname: a\nresource_kind: volume\nactions: [create, destroy]\n"
        "condition: ${true}\nerror_message: m\n---\n"
        "kind: policy\nname: b\nactions: [create]\ncondition: ${true}\nerror_message: m\n"}});
  REQUIRE(bad.diagnostics.size() == 2);
  CHECK(bad.diagnostics[0].summary ==
        "\"destroy\" is not an action: create, update, replace, delete, no-op");
  CHECK(bad.diagnostics[0].location.line == 4);
  CHECK(bad.diagnostics[0].location.column == 19);
  CHECK(bad.diagnostics[1].summary ==
        "`actions` needs `resource_kind`: a plan-wide policy reads them all");
}

TEST_CASE("CAIRN_POLICY_PATH then --policy, each directory once") {
  CHECK(PolicyDirs("/a:/b::/a", {"/c", "/b"}) == std::vector<std::string>{"/a", "/b", "/c"});
  CHECK(PolicyDirs(nullptr, {"p"}) == std::vector<std::string>{"p"});
  CHECK(PolicyDirs("", {}).empty());
}

TEST_CASE("policy tests: a case passes when exactly the expected policies fail") {
  PolicySet set = LoadPoliciesFromText({{"p.yaml", kPolicies}});
  REQUIRE(set.ok());
  PolicyTestSet tests =
      LoadPolicyTestsFromText({{"p.test.yaml",
                                "kind: policy_test\nname: open ssh\nchanges:\n"
                                "  - address: firewall.open\n"
                                "    after: {rules: [{port: '22', source: 0.0.0.0/0}]}\n"
                                "expect_failures: [no-ssh-from-the-world]\n---\n"
                                "kind: policy_test\nname: wrong expectation\nchanges:\n"
                                "  - {address: volume.big, after: {size_gb: 500}}\n"
                                "expect_failures: [no-ssh-from-the-world, no-such-policy]\n---\n"
                                "kind: policy_test\nname: empty plan\n"},
                               {"p.yaml", "not read: not a test file"}});
  INFO((tests.diagnostics.empty() ? std::string() : tests.diagnostics[0].summary));
  REQUIRE(tests.ok());
  REQUIRE(tests.cases.size() == 3);
  CHECK(tests.cases[0].plan.changes[0].kind == "firewall");
  CHECK(tests.cases[0].plan.changes[0].action == Action::kCreate);
  auto outcomes = RunPolicyTests(set.policies, tests.cases);
  REQUIRE(outcomes.size() == 3);
  CHECK(outcomes[0].passed);
  CHECK_FALSE(outcomes[1].passed);
  CHECK(outcomes[1].Message() ==
        "failed but not expected to: small-volumes; expected to fail but did not: "
        "no-ssh-from-the-world; expected to fail but no policy has that name: no-such-policy");
  CHECK(outcomes[1].location.line == 9);
  CHECK(outcomes[2].passed);

  PolicyTestSet bad = LoadPolicyTestsFromText(
      {{"b.test.yaml",
        "kind: policy_test\nname: x\nchanges:\n  - {address: 'not an address'}\n"
        "  - {address: volume.a, action: explode, aftr: {}}\n---\nkind: policy\nname: y\n"}});
  std::vector<std::string> got;
  for (const Diagnostic& d : bad.diagnostics) {
    got.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " +
                  d.code);
  }
  CHECK(got == std::vector<std::string>{"4:15 invalid_value", "5:33 invalid_value",
                                        "5:42 unknown_field", "7:7 invalid_policy_test"});
}

TEST_CASE("plan.summary counts the state-only changes: moves and forgets") {
  PolicySet set = LoadPoliciesFromText(
      {{"p.yaml",
        "kind: policy\nname: no-forgets\ncondition: ${plan.summary.forget == 0}\n"
        "error_message: forgetting objects needs a review\n---\n"
        "kind: policy\nname: moves\ncondition: ${plan.summary.move == 2}\n"
        "error_message: two moves expected\n"}});
  INFO((set.diagnostics.empty() ? std::string() : set.diagnostics[0].summary));
  REQUIRE(set.ok());
  Plan plan;
  plan.moves = {{"network.a", "network.b"}, {"network.c", "network.d"}};
  CHECK(Summaries(EvaluatePolicies(set.policies, plan, nullptr)) ==
        std::vector<std::string>{"no-forgets  passed", "moves  passed"});
  plan.forgets.emplace_back();
  plan.moves.pop_back();
  CHECK(Summaries(EvaluatePolicies(set.policies, plan, nullptr)) ==
        std::vector<std::string>{"no-forgets  failed", "moves  failed"});
}

TEST_CASE("plan.summary counts the objects a plan imports") {
  PolicySet set = LoadPoliciesFromText(
      {{"p.yaml",
        "kind: policy\nname: no-imports\ncondition: ${plan.summary.import == 0}\n"
        "error_message: importing objects needs a review\n"}});
  REQUIRE(set.ok());
  Plan plan;
  CHECK(Summaries(EvaluatePolicies(set.policies, plan, nullptr)) ==
        std::vector<std::string>{"no-imports  passed"});
  plan.imports.push_back({"network.core", "network", "n-1", Value::object()});
  CHECK(Summaries(EvaluatePolicies(set.policies, plan, nullptr)) ==
        std::vector<std::string>{"no-imports  failed"});
}

}  // namespace policy_test
