// Whole-module moves in the state (PlanModuleMove) and in the plan: every
// resource recorded under a module path moves under another, nested
// modules and instances too.
#include <catch2/catch.hpp>

#include "engine/plan/plan.h"
#include "engine/report/plan_report.h"
#include "engine/state/moves.h"

namespace module_moves_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

std::vector<ModuleStep> ModulePathOf(const std::string& text) {
  auto p = ParseModulePath(text);
  REQUIRE(p);
  return *p;
}

StateSnapshot ModuleMoveState(const std::vector<std::string>& addresses) {
  StateSnapshot st;
  int n = 0;
  for (const std::string& a : addresses) {
    ResourceState rs;
    rs.address = a;
    rs.kind = StateKey::Parse(a)->resource.kind;
    rs.id = "id" + std::to_string(n++);
    rs.attributes = {{"id", rs.id}, {"name", rs.id}, {"region", "eu"}};
    st.resources[a] = rs;
  }
  return st;
}

AddressMoves ModuleMoves(const StateSnapshot& st, const std::string& from, const std::string& to) {
  MovePlan p = PlanModuleMove(st, ModulePathOf(from), ModulePathOf(to));
  INFO(p.error);
  CHECK(p.error.empty());
  return p.moves;
}

}  // namespace

TEST_CASE("module moves: a rename takes every resource and nested module, and no other") {
  StateSnapshot st = ModuleMoveState({"module.tier.network.main", "module.tier.instance.app[0]",
                                      "module.tier.module.db.instance.pg", "module.tiers.network.x",
                                      "network.tier", "module.other.module.tier.network.y"});
  CHECK(ModuleMoves(st, "module.tier", "module.region") ==
        AddressMoves{{"module.tier.instance.app[0]", "module.region.instance.app[0]"},
                     {"module.tier.network.main", "module.region.network.main"},
                     {"module.tier.module.db.instance.pg", "module.region.module.db.instance.pg"}});
}

TEST_CASE("module moves: instances keep their keys, or one instance moves to another key") {
  StateSnapshot st = ModuleMoveState({"module.a[0].network.n", "module.a[1].network.n"});
  CHECK(ModuleMoves(st, "module.a", "module.b") ==
        AddressMoves{{"module.a[0].network.n", "module.b[0].network.n"},
                     {"module.a[1].network.n", "module.b[1].network.n"}});
  CHECK(ModuleMoves(st, "module.a[0]", "module.a[\"eu\"]") ==
        AddressMoves{{"module.a[0].network.n", "module.a[\"eu\"].network.n"}});
  // Whole instances under an index: no address.
  MovePlan bad = PlanModuleMove(st, ModulePathOf("module.a"), ModulePathOf("module.b[0]"));
  CHECK(bad.error ==
        "module.a has instances (module.a[0].network.n, ...): move them all to module.b, or one "
        "instance at a time");
  // A module that gains count: its one instance becomes [0].
  StateSnapshot single = ModuleMoveState({"module.a.network.n"});
  CHECK(ModuleMoves(single, "module.a", "module.a[0]") ==
        AddressMoves{{"module.a.network.n", "module.a[0].network.n"}});
  // Once made, that move has nothing left to move (the document stays).
  StateSnapshot made = ModuleMoveState({"module.a[0].network.n"});
  CHECK(PlanModuleMove(made, ModulePathOf("module.a"), ModulePathOf("module.a[0]")).moves.empty());
  // The same for a resource that gained count.
  StateSnapshot counted = ModuleMoveState({"network.n[0]"});
  CHECK(PlanMove(counted, *ResourceAddress::Parse("network.n"),
                 *ResourceAddress::Parse("network.n[0]"))
            .moves.empty());
  MovePlan none = PlanModuleMove(single, ModulePathOf("module.zz"), ModulePathOf("module.b"));
  CHECK(none.moves.empty());
  CHECK(none.error == "nothing in the state is in module.zz (see 'cairn state list')");
}

TEST_CASE("module moves: into and out of nested modules") {
  StateSnapshot st = ModuleMoveState({"module.a.network.n", "module.a.module.b.instance.i"});
  CHECK(
      ModuleMoves(st, "module.a", "module.outer.module.a") ==
      AddressMoves{{"module.a.network.n", "module.outer.module.a.network.n"},
                   {"module.a.module.b.instance.i", "module.outer.module.a.module.b.instance.i"}});
  CHECK(ModuleMoves(st, "module.a.module.b", "module.b") ==
        AddressMoves{{"module.a.module.b.instance.i", "module.b.instance.i"}});
  // Steps before the last match exactly: module.a.module.b is not in module.a[0].
  StateSnapshot counted = ModuleMoveState({"module.a[0].module.b.instance.i"});
  CHECK(PlanModuleMove(counted, ModulePathOf("module.a.module.b"), ModulePathOf("module.c"))
            .moves.empty());
}

TEST_CASE("module moves in a plan: a rename is nothing but the moves, and chains are followed") {
  StackConfig cfg;
  for (const char* a : {"module.region.network.main", "module.region.instance.app[0]"}) {
    ResourceConfig rc;
    rc.address = *ResourceAddress::Parse(a);
    rc.kind = rc.address.kind;
    rc.spec = {{"name", rc.address.kind == "network" ? "id0" : "id1"}, {"region", "eu"}};
    cfg.resources.push_back(rc);
  }
  MovedConfig first;
  first.from_module = ModulePathOf("module.tier");
  first.to_module = ModulePathOf("module.mid");
  first.location = {"main.yaml", 1, 1, 1};
  MovedConfig second = first;
  second.from_module = ModulePathOf("module.mid");
  second.to_module = ModulePathOf("module.region");
  second.location = {"main.yaml", 5, 1, 1};
  cfg.moved = {first, second};
  KindCatalog kinds;
  kinds["network"] = {{"region"}, {"id"}, {}};
  kinds["instance"] = {{"region"}, {"id"}, {}};
  StateSnapshot st = ModuleMoveState({"module.tier.network.main", "module.tier.instance.app[0]"});
  auto r = MakePlan(cfg, st, {}, kinds, {});
  REQUIRE(r.ok());
  CHECK(r.plan.moves ==
        AddressMoves{{"module.tier.instance.app[0]", "module.region.instance.app[0]"},
                     {"module.tier.network.main", "module.region.network.main"}});
  auto n = r.plan.counts();
  CHECK((n.add == 0 && n.change == 0 && n.destroy == 0 && n.replace == 0 && n.move == 2));
  CHECK(RenderPlanText(r.plan, {}).find("0 to destroy, 2 to move.") != std::string::npos);

  // A move onto what the state records is the per-resource rule's error.
  StateSnapshot taken = st;
  taken.resources["module.region.network.main"] = st.resources.at("module.tier.network.main");
  taken.resources["module.region.network.main"].address = "module.region.network.main";
  taken.resources["module.region.network.main"].id = "other";
  auto bad = MakePlan(cfg, taken, {}, kinds, {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.diagnostics[0].code == "moved_target_exists");
  CHECK(bad.diagnostics[0].summary ==
        "cannot move module.mid to module.region: module.region.network.main is already in the "
        "state");
}

TEST_CASE("moves: a deposed object moves with its instance, by resource or by module") {
  StateSnapshot st =
      ModuleMoveState({"module.app.instance.vm", "module.app.instance.vm (deposed)",
                       "instance.web[0]", "instance.web[0] (deposed)", "instance.web[1]"});
  CHECK(ModuleMoves(st, "module.app", "module.region") ==
        AddressMoves{{"module.app.instance.vm", "module.region.instance.vm"},
                     {"module.app.instance.vm (deposed)", "module.region.instance.vm (deposed)"}});
  MovePlan one = PlanMove(st, *ResourceAddress::Parse("instance.web[0]"),
                          *ResourceAddress::Parse("instance.front[0]"));
  CHECK(one.error.empty());
  CHECK(one.moves == AddressMoves{{"instance.web[0]", "instance.front[0]"},
                                  {"instance.web[0] (deposed)", "instance.front[0] (deposed)"}});
  MovePlan all = PlanMove(st, *ResourceAddress::Parse("instance.web"),
                          *ResourceAddress::Parse("instance.front"));
  CHECK(all.error.empty());
  // (In address order: the deposed object's text after the addresses.)
  CHECK(all.moves == AddressMoves{{"instance.web[0]", "instance.front[0]"},
                                  {"instance.web[1]", "instance.front[1]"},
                                  {"instance.web[0] (deposed)", "instance.front[0] (deposed)"}});
  // Applied, the deposed object is still the deposed object of its instance.
  StateSnapshot after = ApplyMoves(st, all.moves);
  REQUIRE(after.resources.count("instance.front[0] (deposed)"));
  CHECK(after.resources.at("instance.front[0] (deposed)").id ==
        st.resources.at("instance.web[0] (deposed)").id);
}

}  // namespace module_moves_test
