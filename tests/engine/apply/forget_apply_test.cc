// Apply of a plan that forgets (`kind: removed` with destroy false): the
// objects leave the state in the first commit, with no request to the API.
#include <catch2/catch.hpp>

#include "engine/apply/apply.h"
#include "engine/report/apply_report.h"
#include "engine/state/memory_state_store.h"
#include "tests/engine/support/fake_provider.h"

namespace forget_apply_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

KindCatalog ForgetKinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  k["instance"] = {{"region", "network"}, {"id", "status"}, {{"network", "network"}}};
  return k;
}

ResourceConfig ForgetRes(const std::string& addr, Value spec) {
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse(addr);
  rc.kind = rc.address.kind;
  rc.spec = std::move(spec);
  return rc;
}

}  // namespace

TEST_CASE("forget: apply drops the object from the state and leaves it in the API") {
  FakeProvider provider;
  MemoryStateStore store;
  ApplyOptions options;
  StackConfig cfg;
  cfg.resources.push_back(
      ForgetRes("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(ForgetRes("instance.web", {{"name", "web"}, {"region", "eu"}}));
  cfg.resources.push_back(ForgetRes("module.app.instance.vm", {{"name", "vm"}, {"region", "eu"}}));
  auto plan_of = [&](const StackConfig& c) {
    auto st = store.Load();
    REQUIRE(st.ok());
    auto r = MakePlan(c, *st, {}, ForgetKinds(), {});
    REQUIRE(r.ok());
    return r.plan;
  };
  REQUIRE(Apply(plan_of(cfg), provider, store, options).ok());
  const std::string web_id = store.Load()->resources.at("instance.web").id;

  // instance.web's document gone, a removed document in its place; the
  // module's, destroy true.
  StackConfig next;
  next.resources.push_back(cfg.resources[0]);
  RemovedConfig keep;
  keep.resource = *ResourceAddress::Parse("instance.web");
  keep.destroy = false;
  RemovedConfig drop;
  drop.module = *ParseModulePath("module.app");
  next.removed = {keep, drop};
  Plan plan = plan_of(next);
  REQUIRE(plan.forgets.size() == 1);
  const int sent = provider.mutations_sent();
  auto r = Apply(plan, provider, store, options);
  REQUIRE(r.ok());
  CHECK(r.summary.forgotten == 1);
  CHECK(r.summary.deleted == 1);
  CHECK(provider.mutations_sent() == sent + 1);  // the module's delete only
  auto st = store.Load();
  CHECK(st->resources.count("instance.web") == 0);
  CHECK(st->resources.count("module.app.instance.vm") == 0);
  CHECK(st->resources.count("network.core") == 1);
  CHECK(provider.resources("instance").count(web_id) == 1);  // still there
  CHECK(ApplySummaryLine(r.summary, false, true, false) ==
        "Apply complete! Resources: 0 added, 0 changed, 0 replaced, 1 destroyed, 1 forgotten.");
  CHECK(ApplySummaryToJson(r, {})["forgotten"] == 1);

  // Done: the same documents plan nothing more.
  CHECK_FALSE(plan_of(next).has_changes());
}

}  // namespace forget_apply_test
