// Conditions at plan time: a precondition, an output's precondition and a
// check are decided with what the plan knows (the manifests through the
// real loader, the recorded state); what it cannot know yet goes with the
// plan, for apply; replace_triggered_by replaces what its triggers change.
#include <catch2/catch.hpp>

#include "engine/manifest/loader.h"
#include "engine/operations/operations.h"
#include "engine/plan/plan.h"
#include "engine/report/plan_html.h"
#include "engine/report/plan_report.h"

namespace conditions_plan_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const char* kStack = R"(kind: variable
name: size
type: number
---
kind: variable
name: secret
type: string
sensitive: true
default: hunter2
---
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: volume
name: data
spec: {region: eu-central, size_gb: '${var.size}'}
lifecycle:
  precondition:
    - condition: ${var.size <= 100}
      error_message: 'volume is ${var.size} GiB (${var.secret})'
    - condition: ${network.net.cidr == "10.0.0.0/16"}
      error_message: the network is a /16
    - condition: ${network.net.id != ""}
      error_message: the network has an id
---
kind: output
name: size
value: ${var.size}
precondition:
  - condition: ${var.size != 13}
    error_message: unlucky
---
kind: check
name: small
assert:
  - condition: ${var.size < 50}
    error_message: 'a volume of ${var.size} GiB is large'
)";

struct Planned {
  PlanResult plan;
  std::string text;  // every diagnostic, one line each
};

Planned PlanWith(int size, const StateSnapshot& state = {}, bool destroy = false) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  o.vars["size"] = std::to_string(size);
  LoadResult loaded = LoadStackFromText({{"main.yaml", kStack}}, o);
  INFO((loaded.diagnostics.empty() ? std::string() : loaded.diagnostics[0].summary));
  REQUIRE(loaded.ok());
  PlanOptions po;
  po.destroy = destroy;
  Planned out;
  out.plan = MakePlan(loaded.config, state, {}, KindCatalogFrom(*loaded.registry), po);
  for (const Diagnostic& d : out.plan.diagnostics) {
    out.text += std::string(d.severity == Severity::kError ? "error " : "warning ") + d.code + " " +
                std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " +
                d.summary + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("conditions at plan: a false precondition is an error at the condition") {
  Planned p = PlanWith(200);
  INFO(p.text);
  CHECK_FALSE(p.plan.ok());
  // Its message reads a sensitive variable: it is not shown at all.
  CHECK(p.text.find("error precondition_failed 20:18 volume.data: precondition failed: (the "
                    "error message holds a sensitive value)") != std::string::npos);
  CHECK(p.text.find("hunter2") == std::string::npos);
  // The one reading the network's planned cidr is known, and holds; the one
  // reading its id is not known before apply: it goes with the change.
  CHECK(p.text.find("22:18") == std::string::npos);
  CHECK(p.text.find("24:18") == std::string::npos);
  const PlannedChange& data = p.plan.plan.changes[1];
  REQUIRE(data.address == "volume.data");
  REQUIRE(data.preconditions.size() == 1);
  CHECK(data.preconditions[0].location.line == 24);
  // The check fails too, as a warning.
  CHECK(p.text.find("warning check_failed 37:16 check small failed: a volume of 200 GiB is "
                    "large") != std::string::npos);
}

TEST_CASE("conditions at plan: preconditions that hold leave the plan as it was") {
  Planned p = PlanWith(20);
  INFO(p.text);
  CHECK(p.plan.ok());
  CHECK(p.text.find("precondition_failed") == std::string::npos);
  CHECK(p.text.find("check_failed") == std::string::npos);
  CHECK(p.plan.plan.counts().add == 2);
}

TEST_CASE("conditions at plan: an output's precondition, and none at destroy") {
  Planned p = PlanWith(13);
  INFO(p.text);
  CHECK(p.text.find("error precondition_failed 31:16 output size: precondition failed: unlucky") !=
        std::string::npos);

  // Once the network is recorded, its id is known and the precondition is
  // decided (it holds): no warning left for it.
  StateSnapshot state;
  ResourceState net;
  net.address = "network.net";
  net.kind = "network";
  net.id = "n-1";
  net.attributes = Value::parse(R"({"id": "n-1", "region": "eu-central", "cidr": "10.0.0.0/16",
                                    "name": "net", "status": "active"})");
  state.resources["network.net"] = net;
  Planned known = PlanWith(20, state);
  INFO(known.text);
  CHECK(known.plan.ok());
  CHECK(known.plan.plan.changes[1].preconditions.empty());

  // Destroying checks no precondition: a stack that no longer satisfies
  // them can still be taken down.
  Planned gone = PlanWith(200, state, true);
  INFO(gone.text);
  CHECK(gone.plan.ok());
  CHECK(gone.text.empty());
}

TEST_CASE("conditions at plan: replace_triggered_by replaces when its trigger changes") {
  const char* stack = R"(kind: variable
name: cidr
type: string
---
kind: network
name: net
spec: {region: eu-central, cidr: '${var.cidr}'}
---
kind: network
name: other
spec: {region: eu-central, cidr: 10.9.0.0/16}
---
kind: volume
name: by_attr
spec: {region: eu-central, size_gb: 10}
lifecycle:
  replace_triggered_by: [network.net.cidr]
---
kind: volume
name: by_other
spec: {region: eu-central, size_gb: 10}
lifecycle:
  replace_triggered_by: [network.other]
)";
  auto plan = [&](const std::string& cidr) {
    LoadOptions o;
    o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
    o.getenv = [](const char*) -> const char* { return nullptr; };
    o.vars["cidr"] = cidr;
    LoadResult loaded = LoadStackFromText({{"main.yaml", stack}}, o);
    REQUIRE(loaded.ok());
    StateSnapshot state;
    auto put = [&](const std::string& addr, const std::string& kind, const std::string& json) {
      ResourceState rs;
      rs.address = addr;
      rs.kind = kind;
      rs.id = addr + "-id";
      rs.attributes = Value::parse(json);
      rs.attributes["id"] = rs.id;
      state.resources[addr] = rs;
    };
    put("network.net", "network",
        R"({"name": "net", "region": "eu-central", "cidr": "10.0.0.0/16"})");
    put("network.other", "network",
        R"({"name": "other", "region": "eu-central", "cidr": "10.9.0.0/16"})");
    put("volume.by_attr", "volume",
        R"({"name": "by_attr", "region": "eu-central", "size_gb": 10})");
    put("volume.by_other", "volume",
        R"({"name": "by_other", "region": "eu-central", "size_gb": 10})");
    return MakePlan(loaded.config, state, {}, KindCatalogFrom(*loaded.registry), {});
  };
  auto find = [](const PlanResult& r, const std::string& addr) {
    for (const PlannedChange& c : r.plan.changes) {
      if (c.address == addr) return c;
    }
    FAIL("no change for " << addr);
    return PlannedChange();
  };
  PlanResult same = plan("10.0.0.0/16");
  REQUIRE(same.ok());
  CHECK(find(same, "volume.by_attr").action == Action::kNoOp);
  CHECK(find(same, "volume.by_other").action == Action::kNoOp);

  PlanResult moved = plan("10.1.0.0/16");
  REQUIRE(moved.ok());
  CHECK(find(moved, "network.net").action == Action::kReplace);
  const PlannedChange by_attr = find(moved, "volume.by_attr");
  CHECK(by_attr.action == Action::kReplace);
  CHECK(by_attr.replace_reason == "replace_triggered_by network.net.cidr: it changes");
  // A trigger on another resource, which does not change, triggers nothing.
  CHECK(find(moved, "volume.by_other").action == Action::kNoOp);
}

TEST_CASE("conditions at plan: check results in the text, Markdown, HTML and JSON reports") {
  Planned p = PlanWith(200);
  REQUIRE(p.plan.plan.check_results.size() == 1);
  const CheckResult& small = p.plan.plan.check_results[0];
  CHECK(small.name == "small");
  CHECK(small.status == CheckResult::Status::kFailed);
  REQUIRE(small.messages.size() == 1);
  CHECK(small.messages[0] == "check small failed: a volume of 200 GiB is large");

  CHECK(RenderPlanText(p.plan.plan).find("\nChecks: 1 failed (small).\n") != std::string::npos);
  CHECK(RenderPlanMarkdown(p.plan.plan)
            .find("| `small` | failed<br>`check small failed: a volume of 200 GiB is large` |") !=
        std::string::npos);
  const std::string html = RenderPlanHtml(p.plan.plan);
  CHECK(html.find("<tr class=\"check-failed\"><td><code>small</code></td><td>failed<br>check "
                  "small failed: a volume of 200 GiB is large</td></tr>") != std::string::npos);
  Value json = PlanToJson(p.plan.plan);
  REQUIRE(json["check_results"].size() == 1);
  CHECK(json["check_results"][0]["status"] == "failed");

  Planned fine = PlanWith(20);
  CHECK(fine.plan.plan.check_results[0].status == CheckResult::Status::kPassed);
  CHECK(RenderPlanText(fine.plan.plan).find("\nChecks: 1 passed.\n") != std::string::npos);
  CHECK(ChecksLine({{"a", CheckResult::Status::kUnknown, {}}}, false) ==
        "Checks: 1 known after apply.");
  CHECK(ChecksLine({{"a", CheckResult::Status::kPassed, {}}}, true) ==
        "Checks after apply: 1 passed.");
  CHECK(ChecksLine({{"a", CheckResult::Status::kUnknown, {}}}, true) ==
        "Checks after apply: 1 not decided (what they read was not made).");
}

}  // namespace conditions_plan_test
