// `kind: removed` in the plan: destroy false forgets (the plan's `forgets`,
// its own count, shown as "will no longer be managed"), destroy true deletes.
#include <catch2/catch.hpp>

#include "engine/plan/plan.h"
#include "engine/report/plan_html.h"
#include "engine/report/plan_report.h"
#include "engine/state/moves.h"

namespace removed_plan_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

KindCatalog RemovedKinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  k["instance"] = {{"region", "network"}, {"id", "status"}, {{"network", "network"}}};
  return k;
}

ResourceState RemovedSt(const std::string& addr, const std::string& id, Value attrs,
                        std::vector<std::string> deps = {}) {
  ResourceState rs;
  rs.address = addr;
  rs.kind = StateKey::Parse(addr)->resource.kind;
  rs.id = id;
  attrs["id"] = id;
  rs.attributes = std::move(attrs);
  rs.depends_on = std::move(deps);
  return rs;
}

RemovedConfig RemovedOf(const std::string& from, bool destroy) {
  RemovedConfig r;
  if (auto path = ParseModulePath(from)) {
    r.module = *path;
  } else {
    r.resource = *ResourceAddress::Parse(from);
  }
  r.destroy = destroy;
  r.location = {"main.yaml", 3, 7, 1};
  return r;
}

// network.core (kept), instance.web[0] and [1], module.app.instance.vm
// and its deposed object, all in the state.
StateSnapshot RemovedState() {
  StateSnapshot st;
  Value net = {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
  st.resources["network.core"] = RemovedSt("network.core", "n1", net);
  for (int i = 0; i < 2; ++i) {
    std::string a = "instance.web[" + std::to_string(i) + "]";
    st.resources[a] =
        RemovedSt(a, "i" + std::to_string(i), {{"name", "w"}, {"region", "eu"}}, {"network.core"});
  }
  st.resources["module.app.instance.vm"] =
      RemovedSt("module.app.instance.vm", "v1", {{"name", "vm"}, {"region", "eu"}});
  st.resources["module.app.instance.vm (deposed)"] =
      RemovedSt("module.app.instance.vm (deposed)", "v0", {{"name", "vm"}, {"region", "eu"}});
  return st;
}

StackConfig RemovedStack() {
  StackConfig cfg;
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse("network.core");
  rc.kind = "network";
  rc.spec = {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
  cfg.resources.push_back(rc);
  return cfg;
}

}  // namespace

TEST_CASE("removed: destroy false forgets every matched object, and deletes nothing") {
  StackConfig cfg = RemovedStack();
  cfg.removed.push_back(RemovedOf("instance.web", false));
  cfg.removed.push_back(RemovedOf("module.app", false));
  auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), {});
  REQUIRE(r.ok());
  REQUIRE(r.plan.forgets.size() == 4);
  CHECK(r.plan.forgets[0].address == "instance.web[0]");
  CHECK(r.plan.forgets[0].kind == "instance");
  CHECK(r.plan.forgets[0].remote_id == "i0");
  CHECK(r.plan.forgets[1].address == "instance.web[1]");
  CHECK(r.plan.forgets[2].address == "module.app.instance.vm");
  CHECK(r.plan.forgets[3].address == "module.app.instance.vm (deposed)");
  REQUIRE(r.plan.changes.size() == 1);  // network.core, no-op
  CHECK(r.plan.changes[0].action == Action::kNoOp);
  auto n = r.plan.counts();
  CHECK((n.forget == 4 && n.destroy == 0 && n.add == 0));
  CHECK(r.plan.has_changes());

  std::string text = RenderPlanText(r.plan, {});
  INFO(text);
  CHECK(text.find("  . instance.web[0]" + std::string(20, ' ') +
                  "will no longer be managed (id i0)\n") != std::string::npos);
  CHECK(text.find("# forgotten by the state, left in place in the API") != std::string::npos);
  CHECK(text.find("Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 4 to forget.") !=
        std::string::npos);
  std::string md = RenderPlanMarkdown(r.plan);
  CHECK(md.find("**4** to forget") != std::string::npos);
  CHECK(md.find("| forget | `instance.web[1]` | will no longer be managed (id `i1`) |") !=
        std::string::npos);
  std::string html = RenderPlanHtml(r.plan, {});
  CHECK(html.find("<tr class=\"forget\" data-address=\"module.app.instance.vm\">") !=
        std::string::npos);

  // JSON: its own list and count; saved and read back, they survive.
  Value j = PlanToJson(r.plan);
  CHECK(j["format_version"] == Plan::kFormatVersion);
  CHECK(j["summary"]["forget"] == 4);
  CHECK(j["forgets"][0] ==
        Value{{"address", "instance.web[0]"}, {"kind", "instance"}, {"remote_id", "i0"}});
  CHECK(PlanToJsonText(r.plan) == j.dump(2));
  auto back = PlanFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->forgets.size() == 4);
  CHECK(back->forgets[3].address == "module.app.instance.vm (deposed)");
  CHECK(back->counts().forget == 4);
}

TEST_CASE("removed: destroy true deletes, as a document removed would be") {
  StackConfig cfg = RemovedStack();
  cfg.removed.push_back(RemovedOf("instance.web[1]", true));
  auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), {});
  REQUIRE(r.ok());
  CHECK(r.plan.forgets.empty());
  auto n = r.plan.counts();
  CHECK(n.forget == 0);
  CHECK(n.destroy == 4);  // web[0], web[1], the module's vm and its deposed object
}

TEST_CASE("removed: one instance forgotten, the rest deleted, and nothing matched is no change") {
  StackConfig cfg = RemovedStack();
  cfg.removed.push_back(RemovedOf("instance.web[1]", false));
  auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), {});
  REQUIRE(r.ok());
  REQUIRE(r.plan.forgets.size() == 1);
  CHECK(r.plan.forgets[0].address == "instance.web[1]");
  CHECK(r.plan.counts().destroy == 3);

  StackConfig none = RemovedStack();
  none.removed.push_back(RemovedOf("instance.gone", false));
  none.removed.push_back(RemovedOf("module.gone", false));
  StateSnapshot st;
  st.resources["network.core"] = RemovedState().resources.at("network.core");
  auto quiet = MakePlan(none, st, {}, RemovedKinds(), {});
  REQUIRE(quiet.ok());
  CHECK(quiet.plan.forgets.empty());
  CHECK_FALSE(quiet.plan.has_changes());
  CHECK(RenderPlanText(quiet.plan, {}).find("No changes.") != std::string::npos);
}

TEST_CASE("removed: what is forgotten is matched at its address once moved") {
  StackConfig cfg = RemovedStack();
  cfg.moved.push_back({*ResourceAddress::Parse("instance.web"),
                       *ResourceAddress::Parse("instance.old"),
                       {"main.yaml", 1, 1, 1}});
  cfg.removed.push_back(RemovedOf("instance.old", false));
  cfg.removed.push_back(RemovedOf("module.app", true));
  auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), {});
  REQUIRE(r.ok());
  CHECK(r.plan.moves.size() == 2);
  REQUIRE(r.plan.forgets.size() == 2);
  CHECK(r.plan.forgets[0].address == "instance.old[0]");
  // A destroy plan forgets too: destroy false means Cairn never deletes it.
  PlanOptions destroy;
  destroy.destroy = true;
  auto d = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), destroy);
  REQUIRE(d.ok());
  CHECK(d.plan.forgets.size() == 2);
  CHECK(d.plan.counts().destroy == 3);  // network.core, the module's two objects
}

TEST_CASE("a saved plan of format 3 still reads, one newer than this cairn is refused") {
  Plan plan;
  plan.lineage = "l";
  Value j = PlanToJson(plan);
  j["format_version"] = 3;
  j["summary"].erase("forget");
  auto old = PlanFromJson(j);
  REQUIRE(old.ok());
  CHECK(old->forgets.empty());
  j["format_version"] = Plan::kFormatVersion + 1;
  auto newer = PlanFromJson(j);
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().message() ==
        "plan format version 7 is not supported (this cairn reads versions 3 to 6): make the "
        "plan again with this cairn ('cairn plan --out FILE')");
}

TEST_CASE("removed: --target and --exclude choose what is forgotten") {
  StackConfig cfg = RemovedStack();
  cfg.removed.push_back(RemovedOf("instance.web", false));
  cfg.removed.push_back(RemovedOf("module.app", false));
  auto forgotten = [](const PlanResult& r) {
    std::vector<std::string> out;
    for (const PlannedForget& f : r.plan.forgets) out.push_back(f.address);
    return out;
  };
  SECTION("a target elsewhere forgets nothing, and deletes nothing") {
    PlanOptions o;
    o.targets = {"network.core"};
    auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), o);
    INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
    REQUIRE(r.ok());
    CHECK(r.plan.forgets.empty());
    for (const PlannedChange& c : r.plan.changes) CHECK(c.action != Action::kDelete);
  }
  SECTION("a target naming forgotten objects: those alone") {
    PlanOptions o;
    o.targets = {"instance.web[1]"};
    auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), o);
    INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
    REQUIRE(r.ok());
    CHECK(forgotten(r) == std::vector<std::string>{"instance.web[1]"});
    for (const PlannedChange& c : r.plan.changes) CHECK(c.action != Action::kDelete);
  }
  SECTION("an exclude keeps them in the state, neither forgotten nor deleted") {
    PlanOptions o;
    o.excludes = {"module.app"};
    auto r = MakePlan(cfg, RemovedState(), {}, RemovedKinds(), o);
    INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
    REQUIRE(r.ok());
    CHECK(forgotten(r) == std::vector<std::string>{"instance.web[0]", "instance.web[1]"});
    for (const PlannedChange& c : r.plan.changes) CHECK(c.action != Action::kDelete);
  }
}

}  // namespace removed_plan_test
