#include <catch2/catch.hpp>

#include "engine/plan/refresh.h"
#include "engine/report/drift_report.h"
#include "tests/engine/support/fake_provider.h"

namespace drift_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

KindCatalog Kinds() {
  KindCatalog k;
  k["instance"] = {{"region"}, {"id", "status", "ipv4"}, {}};
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  return k;
}

ResourceState Track(FakeProvider& p, const std::string& addr, Value attrs) {
  ResourceState rs;
  rs.address = addr;
  rs.kind = ResourceAddress::Parse(addr)->kind;
  rs.id = p.Inject(rs.kind, attrs);
  rs.attributes = attrs;
  rs.attributes["id"] = rs.id;
  return rs;
}

}  // namespace

TEST_CASE("refresh lists each kind once and confirms a missing resource with one GET") {
  FakeProvider p;
  StateSnapshot st;
  for (int i = 0; i < 5; ++i) {
    auto rs = Track(p, "instance.web[" + std::to_string(i) + "]", {{"name", "web"}});
    st.resources[rs.address] = rs;
  }
  auto net = Track(p, "network.core", {{"name", "core"}});
  st.resources[net.address] = net;
  auto hidden = Track(p, "instance.hidden", {{"name", "h"}});
  st.resources[hidden.address] = hidden;
  p.HideFromList(hidden.id);
  auto gone = Track(p, "instance.gone", {{"name", "g"}});
  st.resources[gone.address] = gone;
  p.Remove("instance", gone.id);

  auto r = Refresh(st, p, Kinds(), {});
  REQUIRE(r.ok());
  CHECK(p.reads() == 2);       // only the two missing from the listing
  CHECK(r.requests == 2 + 2);  // one listing per kind + two confirmations
  CHECK(r.live.at("instance.hidden").has_value());
  CHECK_FALSE(r.live.at("instance.gone").has_value());
  CHECK(r.live.at("instance.web[3]")->at("name") == "web");
}

TEST_CASE("refresh gives each address tracking one listed object its live value") {
  // The live view takes the listed values over (moved, not copied): a
  // second address tracking the same object, in a state edited by hand,
  // must see them too, and so must the unmanaged listing the others.
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "network.a", {{"name", "shared"}, {"cidr", "10.0.0.0/16"}});
  st.resources[a.address] = a;
  ResourceState b = a;
  b.address = "network.b";
  st.resources[b.address] = b;
  p.Inject("network", {{"name", "stray"}});
  auto r = Refresh(st, p, Kinds(), {.extra_kinds = {"network"}});
  REQUIRE(r.ok());
  CHECK(r.requests == 1);  // one listing, no confirmation
  REQUIRE(r.live.at("network.a").has_value());
  REQUIRE(r.live.at("network.b").has_value());
  CHECK(r.live.at("network.a")->at("cidr") == "10.0.0.0/16");
  CHECK(*r.live.at("network.b") == *r.live.at("network.a"));
  auto report = DetectDrift(st, r, Kinds(), {.enabled = true});
  REQUIRE(report.items.size() == 1);
  CHECK(report.items[0].type == DriftItem::Type::kUnmanaged);
  CHECK(report.items[0].name == "stray");
}

TEST_CASE(
    "drift reports changed fields, out-of-band deletes and, on request, unmanaged resources") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "instance.a", {{"name", "a"}, {"plan", "small"}, {"status", "running"}});
  auto b = Track(p, "instance.b", {{"name", "b"}});
  auto c = Track(p, "network.c", {{"name", "c"}, {"cidr", "10.0.0.0/16"}});
  st.resources = {{a.address, a}, {b.address, b}, {c.address, c}};
  p.Edit("instance", a.id, "plan", "large");
  p.Edit("instance", a.id, "status", "stopped");  // computed: never drift
  p.Remove("instance", b.id);
  std::string stray = p.Inject("network", {{"name", "stray"}});

  auto refresh = Refresh(st, p, Kinds(), {.extra_kinds = {"network", "instance"}});
  auto report = DetectDrift(st, refresh, Kinds(), {});
  REQUIRE(report.items.size() == 2);
  const auto& changed = report.items[0];
  CHECK(changed.address == "instance.a");
  REQUIRE(changed.changes.size() == 1);
  CHECK(changed.changes[0].field == "plan");
  CHECK(changed.changes[0].after == "large");
  CHECK(report.items[1].type == DriftItem::Type::kDeleted);

  auto with_unmanaged = DetectDrift(st, refresh, Kinds(), {.enabled = true});
  REQUIRE(with_unmanaged.items.size() == 3);
  CHECK(with_unmanaged.items[2].type == DriftItem::Type::kUnmanaged);
  CHECK(with_unmanaged.items[2].id == stray);

  std::string text = RenderDriftText(with_unmanaged, false);
  CHECK(text.find("~ plan: \"small\" -> \"large\"") != std::string::npos);
  CHECK(text.find("Drift: 1 changed, 1 deleted, 0 failed, 1 unmanaged.") != std::string::npos);
  Value j = DriftToJson(with_unmanaged);
  CHECK(j["drift"] == true);
  CHECK(j["items"][1]["type"] == "deleted");
}

TEST_CASE("no drift when live matches the state") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "instance.a", {{"name", "a"}});
  st.resources[a.address] = a;
  auto report = DetectDrift(st, Refresh(st, p, Kinds(), {}), Kinds(), {.enabled = true});
  CHECK_FALSE(report.has_drift());
  CHECK(RenderDriftText(report, false) == "No drift. The live resources match the state.\n");
}

TEST_CASE("drift reports a resource the API reports failed, with the state's taint") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "network.a", {{"name", "a"}, {"status", "running"}});
  auto b = Track(p, "network.b", {{"name", "b"}, {"status", "running"}});
  b.tainted = "provisioning failed: provisioning_failed";
  st.resources = {{a.address, a}, {b.address, b}};
  p.Edit("network", a.id, "status", "failed");
  p.Edit("network", b.id, "status", "failed");
  auto report = DetectDrift(st, Refresh(st, p, Kinds(), {}), Kinds(), {});
  REQUIRE(report.items.size() == 2);
  CHECK(report.items[0].type == DriftItem::Type::kFailed);
  CHECK(report.items[1].reason == "provisioning failed: provisioning_failed");
  std::string text = RenderDriftText(report, false);
  CHECK(text.find("! network.a   failed: the API reports status failed") != std::string::npos);
  CHECK(text.find("Drift: 0 changed, 0 deleted, 2 failed, 0 unmanaged.") != std::string::npos);
  Value j = DriftToJson(report);
  CHECK(j["items"][0]["type"] == "failed");
  CHECK(j["items"][1]["reason"] == "provisioning failed: provisioning_failed");
}

TEST_CASE("unmanaged resources can be scoped by name prefix and by other stacks' states") {
  FakeProvider p;
  StateSnapshot st;
  auto mine = Track(p, "network.web", {{"name", "web-net"}});
  st.resources[mine.address] = mine;
  std::string stray = p.Inject("network", {{"name", "web-stray"}});
  std::string theirs = p.Inject("network", {{"name", "web-theirs"}});
  std::string other_team = p.Inject("network", {{"name", "billing-db"}});
  auto refresh = Refresh(st, p, Kinds(), {.extra_kinds = {"network"}});

  auto all = DetectDrift(st, refresh, Kinds(), {.enabled = true});
  CHECK(all.items.size() == 3);
  UnmanagedScope scope{
      .enabled = true, .name_prefixes = {"web-"}, .managed_elsewhere = {"network/" + theirs}};
  auto scoped = DetectDrift(st, refresh, Kinds(), scope);
  REQUIRE(scoped.items.size() == 1);
  CHECK(scoped.items[0].id == stray);
  CHECK(scoped.items[0].name == "web-stray");
  (void)other_team;
}

TEST_CASE("a field lifecycle.ignore_changes names is listed apart and is no drift") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "instance.a", {{"name", "a"}, {"plan", "small"}});
  auto b = Track(p, "instance.b", {{"name", "b"}, {"plan", "small"}});
  st.resources = {{a.address, a}, {b.address, b}};
  p.Edit("instance", a.id, "plan", "large");
  const IgnoredFields ignored = {{"instance.a", {"plan"}}, {"instance.b", {"plan"}}};

  auto report = DetectDrift(st, Refresh(st, p, Kinds(), {}), Kinds(), {}, ignored);
  REQUIRE(report.items.size() == 1);
  CHECK(report.items[0].changes.empty());
  REQUIRE(report.items[0].ignored.size() == 1);
  CHECK(report.items[0].ignored[0].after == "large");
  CHECK_FALSE(report.items[0].counts());
  CHECK_FALSE(report.has_drift());
  std::string text = RenderDriftText(report, false);
  CHECK(text.find("~ plan: \"small\" -> \"large\"   # ignored: lifecycle.ignore_changes") !=
        std::string::npos);
  CHECK(text.find("No drift. The live resources match the state but for 1 field that "
                  "lifecycle.ignore_changes ignores") != std::string::npos);
  Value j = DriftToJson(report);
  CHECK(j["drift"] == false);
  CHECK(j["items"][0]["type"] == "ignored");
  CHECK(j["items"][0]["ignored"][0]["live"] == "large");

  // Another field changed too: that one counts, the ignored one still does not.
  p.Edit("instance", a.id, "name", "renamed");
  auto both = DetectDrift(st, Refresh(st, p, Kinds(), {}), Kinds(), {}, ignored);
  REQUIRE(both.items.size() == 1);
  CHECK(both.items[0].changes.size() == 1);
  CHECK(both.items[0].ignored.size() == 1);
  CHECK(both.has_drift());
  CHECK(RenderDriftText(both, false)
            .find("Drift: 1 changed, 0 deleted, 0 failed, 0 unmanaged; "
                  "and 1 field that lifecycle.ignore_changes ignores") != std::string::npos);
  CHECK(DriftToJson(both)["items"][0]["type"] == "changed");
}

TEST_CASE("SetIgnoredFields after detection gives what detecting with them gives") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "instance.a", {{"name", "a"}, {"plan", "small"}, {"image", "debian-12"}});
  auto b = Track(p, "instance.b", {{"name", "b"}, {"plan", "small"}});
  auto c = Track(p, "instance.c", {{"name", "c"}, {"plan", "small"}});
  auto gone = Track(p, "instance.gone", {{"name", "gone"}, {"plan", "small"}});
  st.resources = {{a.address, a}, {b.address, b}, {c.address, c}, {gone.address, gone}};
  // a: one ignored field between two that count; b: ignored alone; c: not
  // named; gone: deleted, which no field list changes.
  p.Edit("instance", a.id, "image", "debian-13");
  p.Edit("instance", a.id, "name", "a2");
  p.Edit("instance", a.id, "plan", "large");
  p.Edit("instance", b.id, "plan", "large");
  p.Edit("instance", c.id, "plan", "large");
  p.Remove("instance", gone.id);
  const IgnoredFields ignored = {
      {"instance.a", {"name"}}, {"instance.b", {"plan"}}, {"instance.gone", {"plan"}}};
  auto refresh = Refresh(st, p, Kinds(), {});
  DriftReport with = DetectDrift(st, refresh, Kinds(), {}, ignored);
  DriftReport after = DetectDrift(st, refresh, Kinds(), {});
  REQUIRE(after.items.size() == 4);
  CHECK(after.items[0].changes.size() == 3);  // nothing set apart yet
  SetIgnoredFields(after, ignored);
  CHECK(DriftToJson(after) == DriftToJson(with));
  REQUIRE(after.items.size() == 4);
  auto fields = [](const std::vector<AttributeChange>& changes) {
    std::vector<std::string> out;
    for (const auto& c : changes) out.push_back(c.field);
    return out;
  };
  CHECK(fields(after.items[0].changes) == std::vector<std::string>{"image", "plan"});
  CHECK(fields(after.items[0].ignored) == std::vector<std::string>{"name"});
  CHECK(after.items[1].changes.empty());
  CHECK(fields(after.items[1].ignored) == std::vector<std::string>{"plan"});
  CHECK(fields(after.items[2].changes) == std::vector<std::string>{"plan"});
  CHECK(after.items[3].type == DriftItem::Type::kDeleted);
  CHECK(after.has_drift());
}

TEST_CASE("IgnoredFieldsOf takes every instance's lifecycle.ignore_changes") {
  StackConfig config;
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse("instance.web[1]");
  rc.kind = "instance";
  rc.lifecycle.ignore_changes = {"plan", "image"};
  config.resources.push_back(rc);
  rc.address = *ResourceAddress::Parse("instance.db");
  rc.lifecycle.ignore_changes.clear();
  config.resources.push_back(rc);
  IgnoredFields fields = IgnoredFieldsOf(config);
  CHECK(fields == IgnoredFields{{"instance.web[1]", {"image", "plan"}}});
}

TEST_CASE("an object the stack reads through a data source is not unmanaged") {
  FakeProvider p;
  StateSnapshot st;
  std::string shared = p.Inject("network", {{"name", "shared"}});
  std::string stray = p.Inject("network", {{"name", "stray"}});
  auto refresh = Refresh(st, p, Kinds(), {.extra_kinds = {"network"}});
  auto report =
      DetectDrift(st, refresh, Kinds(), {.enabled = true, .read_as_data = {"network/" + shared}});
  REQUIRE(report.items.size() == 1);
  CHECK(report.items[0].id == stray);
}

TEST_CASE("RecordLiveValues takes the live values of what drifted, and forgets what is gone") {
  FakeProvider p;
  StateSnapshot st;
  auto a = Track(p, "instance.a", {{"name", "a"}, {"plan", "small"}, {"status", "running"}});
  auto b = Track(p, "instance.b", {{"name", "b"}, {"status", "running"}});
  auto c = Track(p, "instance.c", {{"name", "c"}});
  st.resources = {{a.address, a}, {b.address, b}, {c.address, c}};
  p.Edit("instance", a.id, "plan", "large");
  p.Edit("instance", a.id, "status", "stopped");
  p.Edit("instance", b.id, "status", "stopped");  // computed alone: left as recorded
  p.Remove("instance", c.id);
  auto refresh = Refresh(st, p, Kinds(), {});
  StateCommit commit = RecordLiveValues(st, refresh, Kinds());
  REQUIRE(commit.put.size() == 1);
  CHECK(commit.put[0].address == "instance.a");
  CHECK(commit.put[0].id == a.id);
  CHECK(commit.put[0].attributes["plan"] == "large");
  CHECK(commit.put[0].attributes["status"] == "stopped");  // with the rest of the live values
  CHECK(commit.put[0].attributes["id"] == a.id);
  CHECK(commit.remove == std::vector<std::string>{"instance.c"});

  // Recorded, nothing differs any more.
  StateSnapshot after = st;
  after.resources["instance.a"] = commit.put[0];
  after.resources.erase("instance.c");
  CHECK_FALSE(DetectDrift(after, Refresh(after, p, Kinds(), {}), Kinds(), {}).has_drift());
  StateCommit none = RecordLiveValues(after, Refresh(after, p, Kinds(), {}), Kinds());
  CHECK(none.put.empty());
  CHECK(none.remove.empty());
}

}  // namespace drift_test
