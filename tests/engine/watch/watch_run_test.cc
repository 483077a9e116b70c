// One watch run over the FakeProvider: drift and checks from one refresh,
// and which plans remediation may apply.
#include "engine/watch/watch_run.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "engine/manifest/loader.h"
#include "engine/operations/operations.h"
#include "tests/engine/support/fake_provider.h"

namespace watch_run_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

LoadResult Load(const std::string& yaml) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

// Two networks, as applied: in the state and in the API.
struct Applied {
  LoadResult loaded;
  KindCatalog kinds;
  FakeProvider api;
  StateSnapshot state;

  explicit Applied(const std::string& extra = "") {
    loaded = Load(
        "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
        "kind: network\nname: edge\nspec: {region: eu-central, cidr: 10.2.0.0/16}\n" +
        extra);
    REQUIRE(loaded.ok());
    kinds = KindCatalogFrom(*loaded.registry);
    state.lineage = "l-1";
    state.serial = 3;
    for (const char* name : {"core", "edge"}) {
      ResourceState r;
      r.address = std::string("network.") + name;
      r.kind = "network";
      r.attributes = {{"name", name},
                      {"region", "eu-central"},
                      {"cidr", std::string(name) == "core" ? "10.1.0.0/16" : "10.2.0.0/16"}};
      r.id = api.Inject("network", r.attributes);
      r.attributes["id"] = r.id;
      state.resources[r.address] = r;
    }
  }
  WatchRun Run(bool unmanaged = false) {
    WatchRunOptions o;
    o.unmanaged.enabled = unmanaged;
    return RunWatch(loaded.config, state, api, kinds, o);
  }
};

}  // namespace

TEST_CASE("a watch run with nothing changed finds no drift and may apply nothing") {
  Applied s;
  WatchRun run = s.Run();
  REQUIRE(run.ok());
  CHECK_FALSE(run.drift.has_drift());
  CHECK(run.requests >= 1);
  CHECK(run.plan_diagnostics.empty());
  CHECK_FALSE(run.plan.has_changes());
  CHECK(JudgeRemediation(run).empty());
  CHECK(PlannedUpdates(run.plan) == 0);
}

TEST_CASE("a field changed outside Cairn is drift that remediation may put back") {
  Applied s;
  s.api.Edit("network", s.state.resources["network.core"].id, "name", "renamed");
  WatchRun run = s.Run();
  REQUIRE(run.ok());
  REQUIRE(run.drift.has_drift());
  REQUIRE(run.drift.items.size() == 1);
  CHECK(run.drift.items[0].address == "network.core");
  CHECK(PlannedUpdates(run.plan) == 1);
  CHECK(JudgeRemediation(run).empty());
}

TEST_CASE("remediation refuses a plan that does more than put drift back") {
  SECTION("a resource deleted outside Cairn would be created again") {
    Applied s;
    s.api.Remove("network", s.state.resources["network.edge"].id);
    WatchRun run = s.Run();
    REQUIRE(run.ok());
    CHECK(run.drift.has_drift());
    const std::string why = JudgeRemediation(run);
    CHECK(why.find("create network.edge") != std::string::npos);
  }
  SECTION("a manifest change not applied yet is an update of what did not drift") {
    Applied s;
    s.loaded = Load(
        "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
        "kind: network\nname: edge\nspec: {name: edge-2, region: eu-central, cidr: "
        "10.2.0.0/16}\n");
    REQUIRE(s.loaded.ok());
    s.api.Edit("network", s.state.resources["network.core"].id, "name", "renamed");
    WatchRun run = s.Run();
    REQUIRE(run.ok());
    const std::string why = JudgeRemediation(run);
    CHECK(why.find("network.edge") != std::string::npos);
    CHECK(why.find("did not drift") != std::string::npos);
  }
  SECTION("a new resource in the manifests is a create") {
    Applied s("---\nkind: network\nname: extra\nspec: {region: eu-central, cidr: 10.3.0.0/16}\n");
    s.api.Edit("network", s.state.resources["network.core"].id, "name", "renamed");
    WatchRun run = s.Run();
    REQUIRE(run.ok());
    CHECK(JudgeRemediation(run).find("create network.extra") != std::string::npos);
  }
  SECTION("the journal holds an interrupted operation") {
    Applied s;
    s.api.Edit("network", s.state.resources["network.core"].id, "name", "renamed");
    WatchRun run = s.Run();
    run.plan.pending.push_back({"network.core", "network", Action::kUpdate, "", ""});
    CHECK(JudgeRemediation(run).find("journal") != std::string::npos);
  }
}

TEST_CASE("a watch run decides the stack's checks with the live values") {
  Applied s(
      "---\nkind: check\nname: core_named\nassert:\n"
      "  - condition: ${network.core.name == \"core\"}\n"
      "    error_message: core was renamed\n");
  WatchRun ok = s.Run();
  REQUIRE(ok.ok());
  REQUIRE(ok.checks.size() == 1);
  CHECK(ok.checks[0].status == CheckResult::Status::kPassed);

  s.api.Edit("network", s.state.resources["network.core"].id, "name", "renamed");
  WatchRun failing = s.Run();
  REQUIRE(failing.ok());
  REQUIRE(failing.checks.size() == 1);
  CHECK(failing.checks[0].name == "core_named");
  CHECK(failing.checks[0].status == CheckResult::Status::kFailed);
  // As the plan words it.
  CHECK(failing.checks[0].messages.at(0) == "check core_named failed: core was renamed");
}

TEST_CASE("a false postcondition of an unchanged resource is a failing check") {
  Applied s;
  s.loaded = Load(
      "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n"
      "lifecycle:\n  postcondition:\n"
      "    - condition: ${self.cidr == \"10.9.0.0/16\"}\n"
      "      error_message: core is not where it should be\n---\n"
      "kind: network\nname: edge\nspec: {region: eu-central, cidr: 10.2.0.0/16}\n");
  REQUIRE(s.loaded.ok());
  WatchRun run = s.Run();
  REQUIRE(run.ok());
  REQUIRE(run.checks.size() == 1);
  CHECK(run.checks[0].name.find("network.core") == 0);
  CHECK(run.checks[0].status == CheckResult::Status::kFailed);
  CHECK(run.checks[0].messages.at(0).find("core is not where it should be") != std::string::npos);
  // Nothing is applied past a false condition.
  CHECK_FALSE(JudgeRemediation(run).empty());
}

TEST_CASE("a watch run that cannot reach the API fails with why") {
  Applied s;
  s.api.SetUnreachable(true);
  WatchRun run = s.Run();
  CHECK_FALSE(run.ok());
  CHECK_FALSE(run.diagnostics.empty());
  CHECK(JudgeRemediation(run).find("failed") != std::string::npos);
}

TEST_CASE("a watch run with unmanaged scope lists live resources no state tracks") {
  Applied s;
  s.api.Inject("network", {{"name", "stray"}, {"region", "eu-central"}, {"cidr", "10.8.0.0/16"}});
  CHECK_FALSE(s.Run(false).drift.has_drift());
  WatchRun run = s.Run(true);
  REQUIRE(run.ok());
  REQUIRE(run.drift.items.size() == 1);
  CHECK(run.drift.items[0].type == DriftItem::Type::kUnmanaged);
  CHECK(run.drift.items[0].name == "stray");
}

}  // namespace watch_run_test
