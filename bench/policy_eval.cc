// Policy benchmark (issue 29): what checking a plan against policies adds.
// N policies (half per change of a kind, half over the whole plan, each a
// `for` expression or a comparison of the kind users write) over a plan of
// M changes (creates of volumes and firewalls with rules, some values known
// only after apply), evaluated in process by EvaluatePolicies, as `cairn
// plan --policy` does after the plan is made. Goal: 50 policies over 10,000
// changes add under 1 s.
//
// Usage: policy_eval [--policies 50] [--changes 10000] [--runs 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/policy/policy.h"

using namespace cairn;

namespace {

std::string Policies(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    if (!text.empty()) text += "---\n";
    text += "kind: policy\nname: p" + std::to_string(i) + "\n";
    switch (i % 4) {
      case 0:
        text +=
            "resource_kind: firewall\ncondition: '${alltrue([for r in change.after.rules : "
            "!(r.port == \"22\" && r.source == \"0.0.0.0/0\")])}'\n";
        break;
      case 1:
        text += "resource_kind: volume\ncondition: '${change.after.size_gb <= " +
                std::to_string(100 + i) + " || change.action == \"delete\"}'\n";
        break;
      case 2:
        text += "condition: '${plan.summary.destroy <= " + std::to_string(i) + "}'\n";
        break;
      default:
        text +=
            "condition: '${length([for c in plan.changes : c if c.action == \"replace\"]) < "
            "10}'\n";
        break;
    }
    text += "error_message: rule " + std::to_string(i) + "\n";
  }
  return text;
}

Plan MakePlan(int changes) {
  Plan plan;
  for (int i = 0; i < changes; ++i) {
    PlannedChange c;
    const bool firewall = i % 2 == 0;
    c.address = std::string(firewall ? "firewall" : "volume") + ".r" + std::to_string(i);
    c.parsed_address = *ResourceAddress::Parse(c.address);
    c.kind = c.parsed_address.kind;
    c.action = Action::kCreate;
    if (firewall) {
      Value rules = Value::array();
      for (int r = 0; r < 4; ++r) {
        rules.push_back({{"direction", "inbound"},
                         {"action", "allow"},
                         {"protocol", "tcp"},
                         {"port", std::to_string(20 + r)},
                         {"source", "10.0.0.0/8"}});
      }
      c.after = {{"name", c.address}, {"rules", rules}};
    } else {
      // One in ten depends on something not made yet.
      c.after = {{"name", c.address},
                 {"region", "eu-central"},
                 {"size_gb", i % 10 == 1 ? Value("${network.n.size}") : Value(10 + i % 50)}};
    }
    plan.changes.push_back(std::move(c));
  }
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  int policies = 50, changes = 10000, runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--policies"))
      policies = v;
    else if (!std::strcmp(argv[i], "--changes"))
      changes = v;
    else if (!std::strcmp(argv[i], "--runs"))
      runs = v;
    else {
      std::fprintf(stderr, "policy_eval: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  PolicySet set = LoadPoliciesFromText({{"policies.yaml", Policies(policies)}});
  if (!set.ok()) {
    std::fprintf(stderr, "policy_eval: the generated policies do not load: %s\n",
                 set.diagnostics[0].summary.c_str());
    return 1;
  }
  Plan plan = MakePlan(changes);
  std::vector<double> times;
  size_t results = 0, failed = 0;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<PolicyResult> out = EvaluatePolicies(set.policies, plan, nullptr);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    results = out.size();
    failed = std::count_if(out.begin(), out.end(), [](const PolicyResult& p) {
      return p.status != PolicyResult::Status::kPassed &&
             p.status != PolicyResult::Status::kUnknown;
    });
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "policy_eval: %d policies over a plan of %d changes: %zu results (%zu not passed), best "
      "%.3f s, median %.3f s of %d runs (goal: < 1 s) %s\n",
      policies, changes, results, failed, times.front(), times[times.size() / 2], runs,
      times[times.size() / 2] < 1.0 ? "MET" : "MISSED");
  return failed == 0 ? 0 : 1;
}
