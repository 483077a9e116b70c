// Write-only fields through plan and apply: kept out of the plan's `after`
// and `changes` (so out of every report and plan file), sent with the
// create, journaled as a placeholder, and put back from the manifests when
// an interrupted create is sent again.
#include "engine/apply/write_only.h"

#include <catch2/catch.hpp>

#include "engine/apply/apply.h"
#include "engine/report/plan_report.h"
#include "engine/state/memory_state_store.h"
#include "tests/engine/support/fake_provider.h"

namespace write_only_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

const char* kSecret = "#!/bin/sh\necho hunter2-xyzzy";

KindCatalog Kinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  k["instance"] = {{"region", "network"}, {"id", "status"}, {{"network", "network"}}};
  k["instance"].write_only = {"user_data"};
  return k;
}

StackConfig Stack() {
  StackConfig cfg;
  ResourceConfig net;
  net.address = *ResourceAddress::Parse("network.core");
  net.kind = "network";
  net.spec = {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
  cfg.resources.push_back(net);
  ResourceConfig web;
  web.address = *ResourceAddress::Parse("instance.web");
  web.kind = "instance";
  web.spec = {
      {"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}, {"user_data", kSecret}};
  web.depends_on.push_back(net.address);
  cfg.resources.push_back(web);
  return cfg;
}

const PlannedChange& Find(const Plan& p, const std::string& addr) {
  for (const auto& c : p.changes) {
    if (c.address == addr) return c;
  }
  FAIL("no change for " << addr);
  throw 0;
}

}  // namespace

TEST_CASE("a placeholder seals a value in a body and the manifests' value unseals it") {
  const Value secret = kSecret;
  const std::string body = Value{{"name", "web"}, {"userData", secret}}.dump();
  const std::string sealed = SealWriteOnly(body, {secret});
  CHECK(sealed.find("hunter2") == std::string::npos);
  CHECK(HoldsWriteOnlyPlaceholder(sealed));
  CHECK_FALSE(HoldsWriteOnlyPlaceholder(body));
  CHECK(Value::parse(sealed)["userData"] == WriteOnlyPlaceholder(secret));
  CHECK(Value::parse(sealed)["name"] == "web");

  std::vector<std::string> missing;
  const std::string back =
      UnsealWriteOnly(sealed, {{WriteOnlyPlaceholder(secret), secret}}, missing);
  CHECK(missing.empty());
  CHECK(Value::parse(back) == Value::parse(body));

  // Another value has another placeholder: not put back.
  UnsealWriteOnly(sealed, {{WriteOnlyPlaceholder(Value("other")), Value("other")}}, missing);
  CHECK(missing == std::vector<std::string>{WriteOnlyPlaceholder(secret)});
  // Not JSON: left alone.
  CHECK(SealWriteOnly("not json", {secret}) == "not json");
}

TEST_CASE("a write-only field is out of the plan's after changes and reports") {
  auto r = MakePlan(Stack(), {}, {}, Kinds(), {});
  REQUIRE(r.ok());
  const PlannedChange& web = Find(r.plan, "instance.web");
  CHECK(web.action == Action::kCreate);
  CHECK_FALSE(web.after.contains("user_data"));
  for (const auto& ch : web.changes) CHECK(ch.field != "user_data");
  CHECK(web.write_only == Value{{"user_data", kSecret}});

  const std::string json = PlanToJson(r.plan).dump();
  CHECK(json.find("hunter2") == std::string::npos);
  CHECK(PlanToJson(r.plan)["changes"][1]["write_only"] == Value::array({"user_data"}));
  CHECK(PlanToJsonText(r.plan, Value::object()).find("hunter2") == std::string::npos);
  const std::string text = RenderPlanText(r.plan, {});
  CHECK(text.find("hunter2") == std::string::npos);
  CHECK(text.find("+ user_data: (write-only value)") != std::string::npos);

  // Read back, a plan keeps the names alone.
  auto back = PlanFromJson(PlanToJson(r.plan));
  REQUIRE(back.ok());
  CHECK(Find(*back, "instance.web").write_only == Value{{"user_data", nullptr}});
}

TEST_CASE("a write-only field changed alone changes nothing") {
  FakeProvider provider;
  MemoryStateStore store;
  ApplyOptions options;
  REQUIRE(Apply(MakePlan(Stack(), {}, {}, Kinds(), {}).plan, provider, store, options).ok());
  StackConfig edited = Stack();
  edited.resources[1].spec["user_data"] = "#!/bin/sh\necho another";
  auto st = store.Load();
  REQUIRE(st.ok());
  auto r = MakePlan(edited, *st, {}, Kinds(), {});
  REQUIRE(r.ok());
  CHECK_FALSE(r.plan.has_changes());
}

TEST_CASE("apply sends the write-only value and journals its placeholder") {
  FakeProvider provider;
  MemoryStateStore store;
  ApplyOptions options;
  options.kinds = Kinds();
  StackConfig cfg = Stack();
  cfg.resources.erase(cfg.resources.begin());  // the instance alone
  cfg.resources[0].spec.erase("network");
  cfg.resources[0].depends_on.clear();
  provider.LoseResponses(1);  // the create takes effect, its answer is lost
  CHECK_FALSE(Apply(MakePlan(cfg, {}, {}, Kinds(), {}).plan, provider, store, options).ok());
  auto instances = provider.resources("instance");
  REQUIRE(instances.size() == 1);
  CHECK(instances.begin()->second["user_data"] == kSecret);  // sent

  auto pending = store.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  const JournalEntry& e = (*pending)[0];
  CHECK(e.address == "instance.web");
  CHECK(e.body.find("hunter2") == std::string::npos);
  CHECK(e.body.find(WriteOnlyPlaceholder(Value(kSecret))) != std::string::npos);

  SECTION("recovery without the value refuses, and keeps the entry") {
    auto rec = RecoverJournal(provider, store, options);
    CHECK_FALSE(rec.ok());
    REQUIRE(rec.diagnostics.size() == 1);
    CHECK(rec.diagnostics[0].code == "write_only_unavailable");
    CHECK(rec.diagnostics[0].summary.find("instance.web") != std::string::npos);
    CHECK(store.PendingJournal()->size() == 1);
  }
  SECTION("recovery with the manifests' value replays the same request") {
    options.write_only_values = {{WriteOnlyPlaceholder(Value(kSecret)), Value(kSecret)}};
    const int sent = provider.mutations_sent();
    auto rec = RecoverJournal(provider, store, options);
    INFO((rec.diagnostics.empty() ? "" : rec.diagnostics[0].summary));
    REQUIRE(rec.ok());
    CHECK(rec.recovered == 1);
    CHECK(provider.mutations_sent() == sent + 1);
    CHECK(provider.resources("instance").size() == 1);  // replayed: the same body, no conflict
    CHECK(store.PendingJournal()->empty());
    auto st = store.Load();
    REQUIRE(st->resources.count("instance.web") == 1);
    // The fake API echoes every field; the state keeps no write-only one.
    CHECK_FALSE(st->resources.at("instance.web").attributes.contains("user_data"));
  }
}

}  // namespace write_only_test
