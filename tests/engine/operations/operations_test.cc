// The engine's operations over the FakeProvider: the kind catalog from the
// real schemas, planning a stack (refresh, data sources, plan), drift and
// refresh-only (import: import_test.cc).
#include "engine/operations/operations.h"

#include <catch2/catch.hpp>
#include <cctype>

#include "base/schema/schema_registry.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"
#include "engine/report/drift_report.h"
#include "tests/engine/support/fake_provider.h"

namespace operations_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

LoadResult Load(const std::string& yaml) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

PlanOptions Opts() {
  PlanOptions o;
  return o;
}

// A state tracking a network of each name, made live in `api` as recorded.
StateSnapshot TrackNetworks(FakeProvider& api, std::initializer_list<const char*> names) {
  StateSnapshot st;
  for (const char* name : names) {
    ResourceState rs;
    rs.address = std::string("network.") + name;
    rs.kind = "network";
    rs.attributes = {{"name", name}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
    rs.id = api.Inject("network", rs.attributes);
    rs.attributes["id"] = rs.id;
    st.resources[rs.address] = rs;
  }
  return st;
}

const char* kStack =
    "kind: data\nname: shared\ntype: network\nfilter: {name: shared}\n---\n"
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
    "kind: volume\nname: data\nspec: {region: \"${data.network.shared.region}\", size_gb: 10}\n";

}  // namespace

TEST_CASE("KindCatalogFrom reads the planning facts of every kind from the schemas") {
  auto reg = SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(reg.ok());
  KindCatalog kinds = KindCatalogFrom(**reg);
  CHECK(kinds.size() == (*reg)->kinds().size());
  CHECK(kinds.at("network").immutable.count("cidr") == 1);
  CHECK(kinds.at("network").computed.count("id") == 1);
  CHECK(kinds.at("volume").grow_only.count("size_gb") == 1);
  CHECK(kinds.at("instance").references.at("network") == "network");
}

TEST_CASE("PlanStack refreshes, reads the data sources and plans, or says why it could not") {
  auto loaded = Load(kStack);
  REQUIRE(loaded.ok());
  const KindCatalog kinds = KindCatalogFrom(*loaded.registry);
  FakeProvider api;
  api.Inject("network", {{"name", "shared"}, {"region", "us-east"}, {"cidr", "10.9.0.0/16"}});
  // The state holds the network, since changed outside Cairn.
  StateSnapshot st;
  ResourceState core;
  core.address = "network.core";
  core.kind = "network";
  core.attributes = {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
  core.id = api.Inject("network", core.attributes);
  core.attributes["id"] = core.id;
  st.resources[core.address] = core;
  api.Edit("network", core.id, "name", "renamed");

  PlanResult r = PlanStack(loaded.config, st, &api, kinds, Opts());
  INFO(r.diagnostics.size());
  REQUIRE(r.ok());
  // The data source's region reached the new volume; the drift is an update.
  bool saw_volume = false, saw_update = false;
  for (const auto& c : r.plan.changes) {
    if (c.address == "volume.data") {
      saw_volume = true;
      CHECK(c.action == Action::kCreate);
      for (const auto& field : c.changes) {
        if (field.field == "region") CHECK(field.after == "us-east");
      }
      CHECK(std::any_of(c.changes.begin(), c.changes.end(),
                        [](const AttributeChange& f) { return f.field == "region"; }));
    }
    if (c.address == "network.core") saw_update = c.action == Action::kUpdate;
  }
  CHECK(saw_volume);
  CHECK(saw_update);

  // Without refresh the recorded state is trusted: no drift, data still read.
  PlanOptions no_refresh = Opts();
  no_refresh.refresh = false;
  PlanResult trusted = PlanStack(loaded.config, st, &api, kinds, no_refresh);
  REQUIRE(trusted.ok());
  for (const auto& c : trusted.plan.changes) {
    if (c.address == "network.core") CHECK(c.action == Action::kNoOp);
  }

  // A data source that matches nothing: no plan, the reason as a diagnostic.
  auto missing = Load(
      std::string(kStack).replace(std::string(kStack).find("name: shared}"), 13, "name: nowhere}"));
  REQUIRE(missing.ok());
  PlanResult none = PlanStack(missing.config, st, &api, kinds, Opts());
  CHECK_FALSE(none.ok());
  REQUIRE_FALSE(none.diagnostics.empty());
  CHECK(none.diagnostics[0].code == "data_not_found");
  CHECK(none.plan.changes.empty());

  // Without an API: what needs one (here the data source) is an internal
  // error, never a call through a null provider.
  PlanResult no_api = PlanStack(loaded.config, st, nullptr, kinds, no_refresh);
  CHECK_FALSE(no_api.ok());
  REQUIRE_FALSE(no_api.diagnostics.empty());
  CHECK(no_api.diagnostics[0].code == "internal_error");
  // A destroy reads no data source and, without refresh, needs no API.
  PlanOptions destroy = no_refresh;
  destroy.destroy = true;
  CHECK(PlanStack(loaded.config, st, nullptr, kinds, destroy).ok());
}

TEST_CASE("PlanStack with a command's request: its flags, the stack recorded, pending shown") {
  auto loaded = Load(kStack);
  REQUIRE(loaded.ok());
  const KindCatalog kinds = KindCatalogFrom(*loaded.registry);
  FakeProvider api;
  api.Inject("network", {{"name", "shared"}, {"region", "us-east"}, {"cidr", "10.9.0.0/16"}});
  StateSnapshot st;
  ResourceState core;
  core.address = "network.core";
  core.kind = "network";
  core.attributes = {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
  core.id = api.Inject("network", core.attributes);
  core.attributes["id"] = core.id;
  st.resources[core.address] = core;
  api.Edit("network", core.id, "name", "renamed");
  // An interrupted apply left the volume's create in the journal.
  JournalEntry pending;
  pending.seq = 7;
  pending.address = "volume.data";
  pending.action = Action::kCreate;
  pending.kind = "volume";

  StackPlanRequest request;
  request.refresh = false;
  request.targets = {"network.core"};
  request.pending = {pending};
  request.stack_dir = "/src/stacks/web";
  PlanResult r = PlanStack(loaded.config, st, &api, kinds, request);
  REQUIRE(r.ok());
  CHECK(r.plan.stack == "/src/stacks/web");
  REQUIRE(r.plan.pending.size() == 1);
  CHECK(r.plan.pending[0].address == "volume.data");
  // Targeted and not refreshed: the network as recorded, the volume left out.
  for (const auto& c : r.plan.changes) {
    CHECK(c.address == "network.core");
    CHECK(c.action == Action::kNoOp);
  }

  // Refreshed: the rename made outside Cairn is an update.
  request.refresh = true;
  request.pending.clear();
  PlanResult refreshed = PlanStack(loaded.config, st, &api, kinds, request);
  REQUIRE(refreshed.ok());
  CHECK(refreshed.plan.has_changes());
  auto name_before = [](const PlanResult& r) {
    for (const auto& c : r.plan.changes) {
      for (const auto& a : c.changes) {
        if (c.address == "network.core" && a.field == "name") return a.before;
      }
    }
    return Value();
  };
  CHECK(name_before(refreshed) == "renamed");

  // Given a refresh of that state made already (cairn plan makes it while
  // the manifests load), the plan takes it rather than listing again: a
  // rename made after it is not seen.
  RefreshResult made = Refresh(st, api, kinds, {});
  api.Edit("network", core.id, "name", "renamed-again");
  request.refreshed = &made;
  PlanResult taken = PlanStack(loaded.config, st, &api, kinds, request);
  REQUIRE(taken.ok());
  CHECK(name_before(taken) == "renamed");
  request.refreshed = nullptr;
  CHECK(name_before(PlanStack(loaded.config, st, &api, kinds, request)) == "renamed-again");

  // A destroy plans the deletes, without the API when not refreshing.
  StackPlanRequest destroy;
  destroy.refresh = false;
  destroy.destroy = true;
  destroy.stack_dir = "/src/stacks/web";
  PlanResult gone = PlanStack(loaded.config, st, nullptr, kinds, destroy);
  REQUIRE(gone.ok());
  CHECK(gone.plan.destroy);
  REQUIRE(gone.plan.changes.size() == 1);
  CHECK(gone.plan.changes[0].action == Action::kDelete);

  // No plan, no stack: the problems alone.
  StackPlanRequest needs_api;
  needs_api.stack_dir = "/src/stacks/web";
  PlanResult none = PlanStack(loaded.config, st, nullptr, kinds, needs_api);
  CHECK_FALSE(none.ok());
  CHECK(none.plan.stack.empty());
}

TEST_CASE("DetectStackDrift leaves ignored fields uncounted and data sources managed") {
  auto loaded = Load(
      "kind: data\nname: shared\ntype: network\nfilter: {name: shared}\n---\n"
      "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n"
      "lifecycle: {ignore_changes: [name]}\n");
  REQUIRE(loaded.ok());
  const KindCatalog kinds = KindCatalogFrom(*loaded.registry);
  FakeProvider api;
  const std::string shared = api.Inject(
      "network", {{"name", "shared"}, {"region", "eu-central"}, {"cidr", "10.9.0.0/16"}});
  const std::string stray =
      api.Inject("network", {{"name", "stray"}, {"region", "eu-central"}, {"cidr", "10.8.0.0/16"}});
  StateSnapshot st;
  ResourceState core;
  core.address = "network.core";
  core.kind = "network";
  core.attributes = {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
  core.id = api.Inject("network", core.attributes);
  core.attributes["id"] = core.id;
  st.resources[core.address] = core;
  api.Edit("network", core.id, "name", "renamed");

  StackDrift drift = DetectStackDrift(loaded.config, st, api, kinds, {});
  REQUIRE(drift.ok());
  CHECK_FALSE(drift.report.has_drift());
  REQUIRE(drift.report.items.size() == 1);
  CHECK(drift.report.items[0].ignored.at(0).field == "name");

  StackDriftOptions unmanaged;
  unmanaged.unmanaged.enabled = true;
  StackDrift all = DetectStackDrift(loaded.config, st, api, kinds, unmanaged);
  REQUIRE(all.ok());
  std::vector<std::string> unmanaged_ids;
  for (const auto& item : all.report.items) {
    if (item.type == DriftItem::Type::kUnmanaged) unmanaged_ids.push_back(item.id);
  }
  CHECK(unmanaged_ids == std::vector<std::string>{stray});  // not `shared`, which data reads
  CHECK(api.mutations_sent() == 0);
}

TEST_CASE("DetectStateDrift needs no stack, and with its ignored fields set is the stack's drift") {
  auto loaded = Load(
      "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n"
      "lifecycle: {ignore_changes: [name]}\n---\n"
      "kind: network\nname: edge\nspec: {region: eu-central, cidr: 10.2.0.0/16}\n");
  REQUIRE(loaded.ok());
  const KindCatalog kinds = KindCatalogFrom(*loaded.registry);
  FakeProvider api;
  StateSnapshot st = TrackNetworks(api, {"core", "edge"});
  api.Edit("network", st.resources["network.core"].id, "name", "renamed");
  api.Edit("network", st.resources["network.edge"].id, "name", "renamed-too");

  StackDrift ahead = DetectStateDrift(st, api, kinds);
  REQUIRE(ahead.ok());
  REQUIRE(ahead.report.items.size() == 2);
  CHECK(ahead.report.items[0].changes.size() == 1);  // core's name: no stack says to ignore it
  CHECK(ahead.report.items[0].ignored.empty());
  SetIgnoredFields(ahead.report, IgnoredFieldsOf(loaded.config));
  StackDrift stack = DetectStackDrift(loaded.config, st, api, kinds, {});
  REQUIRE(stack.ok());
  CHECK(DriftToJson(ahead.report) == DriftToJson(stack.report));
  CHECK(ahead.report.items[0].ignored.at(0).field == "name");
  CHECK(ahead.report.items[1].changes.at(0).field == "name");
  CHECK(api.mutations_sent() == 0);
}

TEST_CASE("PlanRefreshOnly finds what to record and sends nothing but reads") {
  FakeProvider api;
  const KindCatalog kinds = KindCatalogFrom(**SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR));
  StateSnapshot st = TrackNetworks(api, {"core", "gone"});
  api.Edit("network", st.resources["network.core"].id, "name", "renamed");
  api.Remove("network", st.resources["network.gone"].id);

  RefreshOnlyPlan plan = PlanRefreshOnly(st, api, kinds);
  REQUIRE(plan.ok());
  CHECK(plan.has_changes());
  REQUIRE(plan.commit.put.size() == 1);
  CHECK(plan.commit.put[0].attributes["name"] == "renamed");
  CHECK(plan.commit.remove == std::vector<std::string>{"network.gone"});
  CHECK(plan.report.items.size() == 2);
  CHECK(api.mutations_sent() == 0);
  CHECK(api.calls().empty());
}

TEST_CASE("plan-time errors point at the field or the resource's name, not at `kind:`") {
  auto loaded = Load(
      "kind: volume\n"
      "name: data\n"
      "spec:\n"
      "  region: eu-central\n"
      "  size_gb: 10\n"
      "lifecycle: {prevent_destroy: true}\n"
      "---\n"
      "kind: data\n"
      "name: shared\n"
      "type: network\n"
      "filter: {name: nowhere}\n");
  REQUIRE(loaded.ok());
  const KindCatalog kinds = KindCatalogFrom(*loaded.registry);
  FakeProvider api;
  StateSnapshot st;
  ResourceState vol;
  vol.address = "volume.data";
  vol.kind = "volume";
  vol.attributes = {{"name", "data"}, {"region", "eu-central"}, {"size_gb", 50}};
  vol.id = api.Inject("volume", vol.attributes);
  vol.attributes["id"] = vol.id;
  st.resources[vol.address] = vol;
  auto at = [](const Diagnostic& d) {
    return d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column);
  };

  // The data source that matches nothing: at its name.
  PlanResult data = PlanStack(loaded.config, st, &api, kinds, Opts());
  REQUIRE(data.diagnostics.size() == 1);
  CHECK(data.diagnostics[0].code == "data_not_found");
  CHECK(at(data.diagnostics[0]) == "main.yaml:9:7");

  // A grow-only field lowered: at the field's value.
  StackConfig no_data = loaded.config;
  no_data.data.clear();
  PlanResult shrink = PlanStack(no_data, st, &api, kinds, Opts());
  REQUIRE(shrink.diagnostics.size() == 1);
  CHECK(shrink.diagnostics[0].code == "cannot_shrink");
  CHECK(at(shrink.diagnostics[0]) == "main.yaml:5:12");

  // prevent_destroy: at the resource's name.
  PlanOptions destroy = Opts();
  destroy.destroy = true;
  PlanResult refused = PlanStack(no_data, st, &api, kinds, destroy);
  REQUIRE(refused.diagnostics.size() == 1);
  CHECK(refused.diagnostics[0].code == "prevent_destroy");
  CHECK(at(refused.diagnostics[0]) == "main.yaml:2:7");
}

}  // namespace operations_test
