// Whole-module moves end to end, through the real cairn against `cairn
// serve`: one moved document renames a module (and then gives it count),
// and the plan shows nothing but the moves.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/support/stack_env.h"

namespace module_moves_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

constexpr const char* kModuleMoveTier =
    "kind: network\nname: main\nspec: {name: tier-net, region: eu-central, cidr: 10.50.0.0/16}\n"
    "---\nkind: instance\nname: app\ncount: 2\n"
    "spec: {name: \"app-${count.index}\", region: eu-central, plan: s-1vcpu-1gb, "
    "image: debian-12, network: \"${network.main.id}\"}\n";

bool ModuleMoveHas(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("kind: moved renames a whole module with one document, and the plan is only moves") {
  StackEnv e;
  WriteFile(e.stack + "/modules/tier/tier.yaml", kModuleMoveTier);
  WriteFile(e.stack + "/main.yaml", "kind: module\nname: tier\nsource: modules/tier\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string net = e.StateId("module.tier.network.main");
  const std::string app1 = e.StateId("module.tier.instance.app[1]");

  WriteFile(e.stack + "/main.yaml",
            "kind: module\nname: region\nsource: modules/tier\n---\n"
            "kind: moved\nfrom: module.tier\nto: module.region\n");
  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(ModuleMoveHas(plan.out, "> module.region.network.main"));
  CHECK(ModuleMoveHas(plan.out, "moved from module.tier.instance.app[1]"));
  CHECK(ModuleMoveHas(plan.out,
                      "Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 3 to "
                      "move."));
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(e.StateId("module.region.network.main") == net);
  CHECK(e.StateId("module.region.instance.app[1]") == app1);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"app-0", "app-1"});
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  // The module gains count: its one instance becomes [0], again only moves.
  WriteFile(e.stack + "/main.yaml",
            "kind: module\nname: region\ncount: 1\nsource: modules/tier\n---\n"
            "kind: moved\nfrom: module.tier\nto: module.region\n---\n"
            "kind: moved\nfrom: module.region\nto: module.region[0]\n");
  auto counted = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(counted.out << counted.err);
  CHECK(counted.exit_code == 2);
  CHECK(ModuleMoveHas(counted.out,
                      "0 to add, 0 to change, 0 to replace, 0 to destroy, 3 to "
                      "move."));
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  CHECK(e.StateId("module.region[0].network.main") == net);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  // A move from a module still declared is refused where it is written.
  WriteFile(e.stack + "/main.yaml",
            "kind: module\nname: region\ncount: 1\nsource: modules/tier\n---\n"
            "kind: moved\nfrom: module.region[0]\nto: module.other\n");
  auto bad = e.Cairn({"validate", e.stack});
  INFO(bad.err);
  CHECK(bad.exit_code == 1);
  CHECK(ModuleMoveHas(bad.err, "main.yaml:7:7"));
  CHECK(ModuleMoveHas(bad.err, "moved_from_declared"));
}

}  // namespace module_moves_command_test
