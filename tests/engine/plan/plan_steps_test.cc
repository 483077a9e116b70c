// The plan's steps (engine/plan/plan_steps.h), each alone: small inputs,
// the decision it makes. MakePlan's own tests (plan_test.cc) cover them
// together.
#include "engine/plan/plan_steps.h"

#include <catch2/catch.hpp>

namespace plan_steps_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::plan;

namespace {

KindInfo VolumeInfo() {
  KindInfo k;
  k.immutable = {"region"};
  k.computed = {"id", "status"};
  k.grow_only = {"size_gb"};
  return k;
}

ResourceConfig Res(const std::string& addr, Value spec) {
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse(addr);
  rc.kind = rc.address.kind;
  rc.spec = std::move(spec);
  rc.location = {"main.yaml", 3, 1, 3};
  return rc;
}

ResourceState Recorded(const std::string& addr, Value attrs,
                       std::vector<std::string> depends_on = {}) {
  ResourceState rs;
  rs.address = addr;
  rs.kind = ResourceAddress::Parse(addr)->kind;
  rs.id = "id-" + addr;
  rs.attributes = std::move(attrs);
  rs.depends_on = std::move(depends_on);
  return rs;
}

ConditionConfig Condition(Value condition, std::string message) {
  ConditionConfig c;
  c.condition = std::move(condition);
  c.error_message = std::move(message);
  c.location = {"main.yaml", 9, 5, 9};
  return c;
}

std::vector<std::string> Addresses(const std::vector<PlannedChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.address);
  return out;
}

}  // namespace

TEST_CASE(
    "plan step ForcedReplacements: addresses, base addresses and modules, unknown ones named") {
  StackConfig cfg;
  cfg.resources = {Res("volume.a", {}), Res("volume.b[0]", {}), Res("volume.b[1]", {}),
                   Res("module.app.volume.c", {})};
  std::vector<Diagnostic> diags;
  auto forced = ForcedReplacements(cfg, {"volume.a", "volume.b", "module.app", "volume.x"}, diags);
  CHECK(forced ==
        std::set<std::string>{"volume.a", "volume.b[0]", "volume.b[1]", "module.app.volume.c"});
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "unknown_target");
  CHECK(diags[0].summary == "--replace \"volume.x\" names no resource in the manifests");
}

TEST_CASE("plan step DiffFields: changed fields only, immutable ones force replacement") {
  ResourceConfig rc = Res("volume.a", {});
  rc.lifecycle.ignore_changes = {"labels"};
  KindCatalog kinds{{"volume", VolumeInfo()}};
  Value current = {{"name", "a"}, {"region", "eu"}, {"size_gb", 10}, {"labels", "x"}};
  Value desired = {{"name", "a"},
                   {"region", "us"},
                   {"size_gb", UnknownValue()},
                   {"labels", "y"},
                   {"status", "new"}};
  std::vector<std::string> replace_fields;
  auto changes = DiffFields(desired, current, rc, VolumeInfo(), kinds, replace_fields);
  REQUIRE(changes.size() == 2);  // name equal, labels ignored, status computed
  CHECK(changes[0].field == "region");
  CHECK(changes[0].forces_replacement);
  CHECK(changes[1].field == "size_gb");
  CHECK(IsUnknown(changes[1].after));  // unknown yet: always a change
  CHECK(replace_fields == std::vector<std::string>{"region"});
}

TEST_CASE("plan step ReplacementReason: tainted, failed, forced, in that order") {
  ResourceState rs = Recorded("volume.a", {{"status", "ready"}});
  Value live_failed = {{"status", "failed"}};
  CHECK(ReplacementReason(rs, rs.attributes, true, false).empty());
  CHECK(ReplacementReason(rs, live_failed, true, false) ==
        "failed: the API reports its status as failed");
  CHECK(ReplacementReason(rs, live_failed, /*refreshed=*/false, false).empty());
  CHECK(ReplacementReason(rs, rs.attributes, true, true) == "replacement requested with --replace");
  rs.tainted = "tainted: its provisioning failed";
  CHECK(ReplacementReason(rs, live_failed, true, true) == "tainted: its provisioning failed");
}

TEST_CASE("plan step TriggerIndex: an update or a replace of a trigger replaces the resource") {
  StackConfig cfg;
  ResourceConfig web = Res("volume.web", {});
  Lifecycle::Trigger whole;
  whole.address = *ResourceAddress::Parse("volume.data");
  whole.whole = true;
  Lifecycle::Trigger field;
  field.address = *ResourceAddress::Parse("volume.logs");
  field.attr = "size_gb";
  web.lifecycle.replace_triggered_by = {whole, field};
  cfg.resources = {web};
  TriggerIndex triggers(cfg);
  REQUIRE(triggers.enabled());
  CHECK_FALSE(TriggerIndex(StackConfig{}).enabled());

  std::vector<PlannedChange> changes(2);
  changes[0].address = "volume.logs";
  changes[0].action = Action::kUpdate;
  changes[0].changes = {{"name", "a", "b", false}};
  changes[1].address = "volume.data[0]";
  changes[1].action = Action::kNoOp;
  triggers.Record("volume.logs", 0);
  triggers.Record("volume.data", 1);
  CHECK(triggers.Reason(web, changes).empty());  // logs changes, but not size_gb
  changes[0].changes.push_back({"size_gb", 1, 2, false});
  CHECK(triggers.Reason(web, changes) == "replace_triggered_by volume.logs.size_gb: it changes");
  changes[0].changes.clear();
  changes[1].action = Action::kReplace;
  CHECK(triggers.Reason(web, changes) == "replace_triggered_by volume.data: it is replaced");
}

TEST_CASE("plan step ShrinkRefusals and PreventDestroyOnReplace: lifecycle rules as errors") {
  ResourceConfig rc = Res("volume.a", {});
  PlannedChange ch;
  ch.address = "volume.a";
  ch.changes = {{"size_gb", 20, 10, false}, {"name", "a", "b", false}};
  auto shrink = ShrinkRefusals(ch, VolumeInfo(), rc);
  REQUIRE(shrink.size() == 1);
  CHECK(shrink[0].code == "cannot_shrink");
  CHECK(shrink[0].summary ==
        "volume.a: size_gb cannot shrink from 20 to 10: the API only lets it grow");
  ch.changes[0] = {"size_gb", 10, 20, false};
  CHECK(ShrinkRefusals(ch, VolumeInfo(), rc).empty());

  ch.replace_fields = {"region"};
  Diagnostic d = PreventDestroyOnReplace(ch, rc);
  CHECK(d.code == "prevent_destroy");
  CHECK(d.summary ==
        "volume.a has lifecycle.prevent_destroy set, but the plan must replace it (region forces "
        "replacement)");
  ch.replace_fields.clear();
  ch.replace_reason = "replacement requested with --replace";
  CHECK(PreventDestroyOnReplace(ch, rc).summary.find("(replacement requested with --replace)") !=
        std::string::npos);
}

TEST_CASE("plan step DecidePre/Postconditions: failed refused, unknown kept, no-op warned") {
  ResourceConfig rc = Res("volume.a", {});
  rc.lifecycle.preconditions = {Condition(false, "pre fails"), Condition(true, "holds")};
  rc.lifecycle.postconditions = {Condition("${self.size_gb > 5}", "too small")};
  AttributeLookup nothing = [](const ResourceAddress&, const std::string&) {
    return std::optional<Value>();
  };
  PlannedChange ch;
  ch.address = "volume.a";
  ch.action = Action::kUpdate;
  Refusals refusals;
  DecidePreconditions(rc, ch, nothing, {}, refusals);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].second.code == "precondition_failed");
  CHECK(refusals[0].second.summary == "volume.a: precondition failed: pre fails");
  CHECK(ch.preconditions.empty());

  refusals.clear();
  DecidePostconditions(rc, ch, nothing, Value{{"size_gb", UnknownValue()}}, {}, refusals);
  CHECK(refusals.empty());
  CHECK(ch.postconditions.size() == 1);  // for apply, once self is known
  ch.postconditions.clear();
  DecidePostconditions(rc, ch, nothing, Value{{"size_gb", 1}}, {}, refusals);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].second.summary == "volume.a: postcondition failed: too small");

  // No change: nothing checks an undecided condition at apply, so it is said.
  refusals.clear();
  ch.action = Action::kNoOp;
  DecidePostconditions(rc, ch, nothing, Value{{"size_gb", UnknownValue()}}, {}, refusals);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].second.code == "condition_not_checked");
  CHECK(ch.postconditions.empty());
}

TEST_CASE("plan step PlanDeletes: what is no longer desired, dependents first") {
  StateSnapshot st;
  for (auto rs : {Recorded("network.core", {}), Recorded("volume.keep", {}),
                  Recorded("instance.b", {}, {"network.core"}),
                  Recorded("instance.a", {}, {"network.core", "instance.b"})}) {
    st.resources[rs.address] = rs;
  }
  StackConfig cfg;
  Refusals refusals;
  PlanOptions options;
  auto deletes = PlanDeletes(cfg, st, {}, {"volume.keep"}, options, refusals);
  CHECK(Addresses(deletes) == std::vector<std::string>{"instance.a", "instance.b", "network.core"});
  for (const auto& d : deletes) CHECK(d.action == Action::kDelete);
  CHECK(refusals.empty());

  // A destroy takes everything; prevent_destroy refuses, by address.
  cfg.resources = {Res("volume.keep", {})};
  cfg.resources[0].lifecycle.prevent_destroy = true;
  options.destroy = true;
  LiveView live{{"instance.a", std::nullopt}};
  deletes = PlanDeletes(cfg, st, live, {"volume.keep"}, options, refusals);
  CHECK(deletes.size() == 4);
  CHECK(deletes[0].note == "already deleted outside Cairn");
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].first == "volume.keep");
  CHECK(refusals[0].second.code == "prevent_destroy");
}

TEST_CASE("plan step PlanOutputs and PlanChecks: changes against the state, checks decided") {
  StackConfig cfg;
  cfg.outputs = {{"same", "x", false, {}, {}}, {"new", "y", true, {}, {}}};
  cfg.outputs[1].preconditions = {Condition(false, "no")};
  CheckConfig check{"size", {Condition(false, "too big"), Condition(true, "fine")}, {}};
  CheckConfig later{"later", {Condition("${volume.a.id != \"\"}", "unknown yet")}, {}};
  cfg.checks = {check, later};
  StateSnapshot st;
  st.outputs = {{"same", "x"}, {"gone", "z"}};
  PlannedValues planned;
  AttributeLookup lookup = [](const ResourceAddress&, const std::string&) {
    return std::optional<Value>();
  };
  Plan plan;
  std::vector<Diagnostic> diags;
  PlanOutputs(cfg, st, {}, planned, lookup, {}, plan, diags);
  CHECK(plan.outputs.size() == 2);
  REQUIRE(plan.output_changes.size() == 2);
  CHECK(plan.output_changes[0].name == "new");
  CHECK(plan.output_changes[0].action == Action::kCreate);
  CHECK(plan.output_changes[0].sensitive);
  CHECK(plan.output_changes[1].name == "gone");
  CHECK(plan.output_changes[1].action == Action::kDelete);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].summary == "output new: precondition failed: no");

  diags.clear();
  PlanChecks(cfg, lookup, {}, plan, diags);
  REQUIRE(plan.check_results.size() == 2);
  CHECK(plan.check_results[0].status == CheckResult::Status::kFailed);
  CHECK(plan.check_results[1].status == CheckResult::Status::kUnknown);
  REQUIRE(plan.checks.size() == 1);
  CHECK(plan.checks[0].name == "later");
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].severity == Severity::kWarning);
  CHECK(diags[0].code == "check_failed");
}

}  // namespace plan_steps_test
