// Conditions the plan could not decide, checked by apply against the fake
// provider: a precondition before the request (not sent when false, its
// dependents skipped), a postcondition once the resource is ready (`self`
// as returned; the resource recorded, its dependents skipped), an output's
// precondition and a check at the end; and all of them through a saved
// plan's JSON.
#include <catch2/catch.hpp>

#include "engine/apply/apply.h"
#include "engine/state/memory_state_store.h"
#include "tests/engine/support/fake_provider.h"

namespace conditions_apply_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

KindCatalog Kinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  k["instance"] = {{"region", "network"}, {"id", "status"}, {{"network", "network"}}};
  return k;
}

ResourceConfig Res(const std::string& addr, Value spec, std::vector<std::string> deps = {}) {
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse(addr);
  rc.kind = rc.address.kind;
  rc.spec = std::move(spec);
  for (const auto& d : deps) rc.depends_on.push_back(*ResourceAddress::Parse(d));
  return rc;
}

ConditionConfig Cond(const std::string& condition, const std::string& message, int line) {
  return {condition, message, {"main.yaml", line, 5, 1}};
}

// network.core, then instance.web on it, then instance.tail on web; and an
// independent instance.side.
StackConfig Chain() {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  cfg.resources.push_back(
      Res("instance.tail", {{"name", "tail"}, {"region", "eu"}, {"network", "${instance.web.id}"}},
          {"instance.web"}));
  cfg.resources.push_back(Res("instance.side", {{"name", "side"}, {"region", "eu"}}));
  return cfg;
}

struct Run {
  PlanResult planned;
  ApplyResult applied;
  std::string diags;  // the apply's, one per line: "code line: summary"
};

Run PlanAndApply(FakeProvider& provider, MemoryStateStore& store, const StackConfig& cfg,
                 bool through_json = false) {
  Run out;
  out.planned = MakePlan(cfg, *store.Load(), {}, Kinds(), {});
  REQUIRE(out.planned.ok());
  Plan plan = out.planned.plan;
  if (through_json) {
    auto back = PlanFromJson(PlanToJson(plan));
    REQUIRE(back.ok());
    plan = *back;
  }
  ApplyOptions options;
  options.parallelism = 2;
  out.applied = Apply(plan, provider, store, options);
  for (const Diagnostic& d : out.applied.diagnostics) {
    out.diags += d.code + " " + std::to_string(d.location.line) + ": " + d.summary + "\n";
  }
  return out;
}

bool Sent(FakeProvider& provider, const std::string& call) {
  auto calls = provider.calls();
  return std::find(calls.begin(), calls.end(), call) != calls.end();
}

}  // namespace

TEST_CASE("conditions at apply: a false precondition holds the resource and its dependents back") {
  for (bool through_json : {false, true}) {
    INFO("through a saved plan's JSON: " << through_json);
    FakeProvider provider;
    MemoryStateStore store;
    StackConfig cfg = Chain();
    // The network's status is known once it is made: not at plan.
    cfg.resources[1].lifecycle.preconditions.push_back(
        Cond("${network.core.status == \"active\"}", "network is ${network.core.status}", 7));
    Run r = PlanAndApply(provider, store, cfg, through_json);
    INFO(r.diags);
    // Not decided at plan, so carried by the change.
    CHECK(r.planned.plan.changes[1].preconditions.size() == 1);
    CHECK_FALSE(r.applied.ok());
    CHECK(r.diags.find("precondition_failed 7: instance.web: precondition failed: network is "
                       "running\n") != std::string::npos);
    CHECK(r.applied.summary.held_back == 1);
    CHECK(r.applied.summary.failed == 1);
    CHECK(r.applied.summary.skipped == 1);  // instance.tail
    CHECK(r.applied.summary.created == 2);  // the network, and instance.side goes on
    CHECK_FALSE(Sent(provider, "create instance web"));
    CHECK_FALSE(Sent(provider, "create instance tail"));
    CHECK(Sent(provider, "create instance side"));
    CHECK_FALSE(store.Load()->resources.count("instance.web"));
    CHECK(store.PendingJournal()->empty());
  }
}

TEST_CASE("conditions at apply: a precondition that holds lets the resource through") {
  FakeProvider provider;
  MemoryStateStore store;
  StackConfig cfg = Chain();
  cfg.resources[1].lifecycle.preconditions.push_back(
      Cond("${network.core.status == \"running\"}", "network is ${network.core.status}", 7));
  Run r = PlanAndApply(provider, store, cfg);
  INFO(r.diags);
  CHECK(r.applied.ok());
  CHECK(r.applied.summary.created == 4);
  CHECK(r.applied.summary.held_back == 0);
}

TEST_CASE("conditions at apply: a failed postcondition keeps the resource, stops its dependents") {
  for (bool through_json : {false, true}) {
    INFO("through a saved plan's JSON: " << through_json);
    FakeProvider provider;
    MemoryStateStore store;
    StackConfig cfg = Chain();
    cfg.resources[1].lifecycle.postconditions.push_back(
        Cond("${self.status == \"active\" && self.name == \"web\"}", "web is ${self.status}", 9));
    Run r = PlanAndApply(provider, store, cfg, through_json);
    INFO(r.diags);
    CHECK(r.planned.plan.changes[1].postconditions.size() == 1);
    CHECK_FALSE(r.applied.ok());
    CHECK(r.diags.find("postcondition_failed 9: instance.web: postcondition failed: web is "
                       "running\n") != std::string::npos);
    CHECK(Sent(provider, "create instance web"));
    CHECK_FALSE(Sent(provider, "create instance tail"));
    CHECK(r.applied.summary.skipped == 1);
    CHECK(r.applied.summary.held_back == 0);
    // It exists: it is recorded, with what the API returned.
    auto state = store.Load();
    REQUIRE(state->resources.count("instance.web"));
    CHECK(state->resources.at("instance.web").attributes["status"] == "running");
    CHECK(state->resources.at("instance.web").tainted.empty());
  }
}

TEST_CASE("conditions at apply: a postcondition known at plan is decided there") {
  FakeProvider provider;
  MemoryStateStore store;
  StackConfig cfg = Chain();
  cfg.resources[3].lifecycle.postconditions.push_back(
      Cond("${self.region == \"us\"}", "side is in ${self.region}", 11));
  PlanResult r = MakePlan(cfg, *store.Load(), {}, Kinds(), {});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "postcondition_failed");
  CHECK(r.diagnostics[0].summary == "instance.side: postcondition failed: side is in eu");
  CHECK(r.diagnostics[0].location.line == 11);
}

TEST_CASE("conditions at apply: checks and output preconditions are decided at the end") {
  for (bool through_json : {false, true}) {
    INFO("through a saved plan's JSON: " << through_json);
    FakeProvider provider;
    MemoryStateStore store;
    StackConfig cfg = Chain();
    cfg.outputs.push_back({"web_id", "${instance.web.id}", false, {}, {}});
    cfg.outputs[0].preconditions.push_back(
        Cond("${instance.web.status == \"stopped\"}", "web is not stopped", 13));
    cfg.outputs.push_back({"side_id", "${instance.side.id}", false, {}, {}});
    cfg.checks.push_back({"all_running", {}, {"main.yaml", 15, 7, 1}});
    cfg.checks[0].asserts.push_back(
        Cond("${instance.side.status == \"running\"}", "side is down", 16));
    cfg.checks[0].asserts.push_back(
        Cond("${network.core.status == \"gone\"}", "core is ${network.core.status}", 17));
    Run r = PlanAndApply(provider, store, cfg, through_json);
    INFO(r.diags);
    REQUIRE(r.planned.plan.checks.size() == 1);
    CHECK(r.planned.plan.checks[0].asserts.size() == 2);
    // The output's precondition fails: an error, and the output is null.
    CHECK(r.diags.find("precondition_failed 13: output web_id: precondition failed: web is not "
                       "stopped\n") != std::string::npos);
    CHECK(r.applied.outputs.at("web_id").is_null());
    CHECK(r.applied.outputs.at("side_id").is_string());
    // Each failing assertion of the check, a warning.
    CHECK(r.diags.find("check_failed 17: check all_running failed: core is running\n") !=
          std::string::npos);
    CHECK(r.diags.find("side is down") == std::string::npos);
    for (const Diagnostic& d : r.applied.diagnostics) {
      if (d.code == "check_failed") CHECK(d.severity == Severity::kWarning);
    }
    CHECK(r.applied.summary.created == 4);
  }
}

TEST_CASE("conditions at apply: after a failure, what reads the unmade is left undecided") {
  FakeProvider provider;
  MemoryStateStore store;
  StackConfig cfg = Chain();
  cfg.resources[1].lifecycle.preconditions.push_back(
      Cond("${network.core.status == \"active\"}", "network is ${network.core.status}", 7));
  cfg.outputs.push_back({"web_id", "${instance.web.id}", false, {}, {}});
  cfg.outputs[0].preconditions.push_back(Cond("${instance.web.id != \"\"}", "no id", 13));
  cfg.checks.push_back({"web_up", {}, {"main.yaml", 15, 7, 1}});
  cfg.checks[0].asserts.push_back(Cond("${instance.web.status == \"running\"}", "web is down", 16));
  Run r = PlanAndApply(provider, store, cfg);
  INFO(r.diags);
  // One error, the precondition's: nothing more about what it held back.
  int errors = 0;
  for (const Diagnostic& d : r.applied.diagnostics) errors += d.is_error() ? 1 : 0;
  CHECK(errors == 1);
  CHECK(r.diags.find("precondition_failed 7:") != std::string::npos);
  CHECK(r.diags.find("check_failed") == std::string::npos);
  CHECK(r.applied.outputs.at("web_id").is_null());
  REQUIRE(r.applied.checks.size() == 1);
  CHECK(r.applied.checks[0].status == CheckResult::Status::kUnknown);
}

TEST_CASE("conditions at apply: a replace whose precondition fails keeps the old object") {
  FakeProvider provider;
  MemoryStateStore store;
  StackConfig cfg = Chain();
  cfg.resources.erase(cfg.resources.begin() + 2);  // no tail
  REQUIRE(PlanAndApply(provider, store, cfg).applied.ok());
  const std::string old_id = store.Load()->resources.at("instance.web").id;

  // The region forces a replace (delete first). A saved plan made when the
  // precondition could not be decided carries it: false now, it holds the
  // replace back before its delete.
  cfg.resources[1].spec["region"] = "us";
  PlanResult planned = MakePlan(cfg, *store.Load(), {}, Kinds(), {});
  REQUIRE(planned.ok());
  Plan plan = planned.plan;
  bool found = false;
  for (PlannedChange& c : plan.changes) {
    if (c.address != "instance.web") continue;
    REQUIRE(c.action == Action::kReplace);
    c.preconditions.push_back(
        Cond("${network.core.status == \"active\"}", "network is ${network.core.status}", 7));
    found = true;
  }
  REQUIRE(found);
  ApplyOptions options;
  ApplyResult r = Apply(plan, provider, store, options);
  CHECK_FALSE(r.ok());
  CHECK(r.summary.held_back == 1);
  for (const std::string& call : provider.calls()) {
    CHECK(call.rfind("delete instance", 0) != 0);
  }
  CHECK(store.Load()->resources.at("instance.web").id == old_id);
}

}  // namespace conditions_apply_test
