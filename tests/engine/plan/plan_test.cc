#include "engine/plan/plan.h"

#include <catch2/catch.hpp>

#include "engine/manifest/expr.h"
#include "engine/report/plan_report.h"

namespace plan_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

KindCatalog Kinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status", "created_at"}, {}};
  k["instance"] = {{"region", "image", "network"},
                   {"id", "status", "ipv4", "created_at"},
                   {{"network", "network"}, {"ssh_keys", "ssh_key"}}};
  k["ssh_key"] = {{"public_key"}, {"id", "fingerprint", "created_at"}, {}};
  return k;
}

ResourceConfig Res(const std::string& addr, Value spec, std::vector<std::string> deps = {}) {
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse(addr);
  rc.kind = rc.address.kind;
  rc.spec = std::move(spec);
  for (const auto& d : deps) rc.depends_on.push_back(*ResourceAddress::Parse(d));
  rc.location = {"main.yaml", 1, 1, 1};
  return rc;
}

ResourceState St(const std::string& addr, const std::string& id, Value attrs,
                 std::vector<std::string> deps = {}) {
  ResourceState rs;
  rs.address = addr;
  rs.kind = ResourceAddress::Parse(addr)->kind;
  rs.id = id;
  attrs["id"] = id;
  rs.attributes = std::move(attrs);
  rs.depends_on = std::move(deps);
  return rs;
}

PlanOptions Opts() { return {}; }

const PlannedChange& Find(const Plan& p, const std::string& addr) {
  for (const auto& c : p.changes) {
    if (c.address == addr) return c;
  }
  FAIL("no change for " << addr);
  throw 0;
}

}  // namespace

TEST_CASE("a resource missing from state is created, with unknown computed attributes downstream") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  auto r = MakePlan(cfg, {}, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(Find(r.plan, "network.core").action == Action::kCreate);
  const auto& web = Find(r.plan, "instance.web");
  CHECK(web.action == Action::kCreate);
  // The reference is kept for apply to resolve.
  CHECK(web.after["network"] == "${network.core.id}");
  CHECK(r.plan.counts().add == 2);
}

TEST_CASE("an unchanged resource is a no-op, computed and API-defaulted fields never show") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  StateSnapshot st;
  st.resources["network.core"] = St("network.core", "n1",
                                    {{"name", "core"},
                                     {"region", "eu"},
                                     {"cidr", "10.0.0.0/16"},
                                     {"status", "running"},
                                     {"created_at", "2026-01-01T00:00:00Z"},
                                     {"extra_default", 5}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(Find(r.plan, "network.core").action == Action::kNoOp);
  CHECK_FALSE(r.plan.has_changes());
  CHECK(RenderPlanText(r.plan).find("No changes.") != std::string::npos);
}

TEST_CASE("an editable field differing is an update in place listing the field") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("instance.api", {{"name", "api"}, {"region", "eu"}, {"plan", "s-2vcpu-4gb"}}));
  StateSnapshot st;
  st.resources["instance.api"] =
      St("instance.api", "i1", {{"name", "api"}, {"region", "eu"}, {"plan", "s-1vcpu-1gb"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  const auto& c = Find(r.plan, "instance.api");
  CHECK(c.action == Action::kUpdate);
  REQUIRE(c.changes.size() == 1);
  CHECK(c.changes[0].field == "plan");
  CHECK(c.changes[0].before == "s-1vcpu-1gb");
  CHECK(c.changes[0].after == "s-2vcpu-4gb");
  CHECK(
      RenderPlanText(r.plan).find(
          "  ~ instance.api   update in-place\n      ~ plan: \"s-1vcpu-1gb\" -> \"s-2vcpu-4gb\"") !=
      std::string::npos);
}

TEST_CASE("an immutable field differing forces replacement and names the field") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.1.0.0/16"}}));
  StateSnapshot st;
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  const auto& c = Find(r.plan, "network.core");
  CHECK(c.action == Action::kReplace);
  CHECK(c.replace_fields == std::vector<std::string>{"cidr"});
  CHECK(RenderPlanText(r.plan).find("-/+ network.core   replace (cidr forces replacement)") !=
        std::string::npos);
}

TEST_CASE("replacing a dependency makes dependents' references unknown, cascading replacement") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.1.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  StateSnapshot st;
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  st.resources["instance.web"] =
      St("instance.web", "i1", {{"name", "web"}, {"region", "eu"}, {"network", "n1"}},
         {"network.core"});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  const auto& web = Find(r.plan, "instance.web");
  CHECK(web.action == Action::kReplace);
  REQUIRE(web.changes.size() == 1);
  CHECK(IsUnknown(web.changes[0].after));
  CHECK(RenderPlanText(r.plan).find("network: \"n1\" -> (known after apply)") != std::string::npos);
}

TEST_CASE("a known reference to an unchanged dependency compares equal, ids canonicalised") {
  StackConfig cfg;
  cfg.resources.push_back(Res("instance.web", {{"name", "web"}, {"region", "eu"}}));
  cfg.resources.push_back(
      Res("network.n", {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  StateSnapshot st;
  st.resources["instance.web"] = St("instance.web", "01234567-89ab-cdef-0123-456789abcdef",
                                    {{"name", "web"}, {"region", "eu"}});
  st.resources["network.n"] =
      St("network.n", "n1", {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  // A firewall-like kind referring to instances by either id form.
  KindCatalog kinds = Kinds();
  kinds["instance"].id_alias = "inst_";
  kinds["firewall"] = {{}, {"id"}, {{"instances", "instance"}}};
  cfg.resources.push_back(
      Res("firewall.edge", {{"name", "edge"}, {"instances", Value::array({"${instance.web.id}"})}},
          {"instance.web"}));
  st.resources["firewall.edge"] = St(
      "firewall.edge", "fw1",
      {{"name", "edge"}, {"instances", Value::array({"inst_0123456789ABCDEF0123456789abcdef"})}});
  auto r = MakePlan(cfg, st, {}, kinds, Opts());
  CHECK(Find(r.plan, "firewall.edge").action == Action::kNoOp);
  // The alias is what makes the two spellings one: without it, they differ.
  kinds["instance"].id_alias.clear();
  CHECK(Find(MakePlan(cfg, st, {}, kinds, Opts()).plan, "firewall.edge").action == Action::kUpdate);
}

TEST_CASE("ignore_changes skips the listed fields") {
  StackConfig cfg;
  auto rc = Res("instance.api", {{"name", "api"}, {"region", "eu"}, {"plan", "s-2vcpu-4gb"}});
  rc.lifecycle.ignore_changes = {"plan"};
  cfg.resources.push_back(rc);
  StateSnapshot st;
  st.resources["instance.api"] =
      St("instance.api", "i1", {{"name", "api"}, {"region", "eu"}, {"plan", "s-1vcpu-1gb"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  CHECK(Find(r.plan, "instance.api").action == Action::kNoOp);
}

TEST_CASE("prevent_destroy refuses a replacement and a destroy") {
  StackConfig cfg;
  auto rc = Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.1.0.0/16"}});
  rc.lifecycle.prevent_destroy = true;
  cfg.resources.push_back(rc);
  StateSnapshot st;
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics[0].code == "prevent_destroy");
  CHECK(r.diagnostics[0].location.file == "main.yaml");

  auto opts = Opts();
  opts.destroy = true;
  cfg.resources[0].spec["cidr"] = "10.0.0.0/16";
  auto d = MakePlan(cfg, st, {}, Kinds(), opts);
  REQUIRE_FALSE(d.ok());
  CHECK(d.diagnostics[0].summary.find("cannot be destroyed") != std::string::npos);
}

TEST_CASE("resources gone from the manifests are deleted, dependents first") {
  StateSnapshot st;
  st.resources["network.a"] = St("network.a", "n1", {{"name", "a"}});
  st.resources["instance.b"] = St("instance.b", "i1", {{"name", "b"}}, {"network.a"});
  st.resources["ssh_key.c"] = St("ssh_key.c", "k1", {{"name", "c"}});
  st.resources["instance.b"].depends_on.push_back("ssh_key.c");
  auto r = MakePlan({}, st, {}, Kinds(), Opts());
  REQUIRE(r.plan.changes.size() == 3);
  CHECK(r.plan.changes[0].address == "instance.b");
  for (const auto& c : r.plan.changes) CHECK(c.action == Action::kDelete);
  CHECK(r.plan.counts().destroy == 3);
}

TEST_CASE("a resource deleted outside Cairn is created again, refresh=false trusts the state") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  StateSnapshot st;
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  LiveView live;
  live["network.core"] = std::nullopt;
  auto r = MakePlan(cfg, st, live, Kinds(), Opts());
  CHECK(Find(r.plan, "network.core").action == Action::kCreate);
  CHECK(Find(r.plan, "network.core").note.find("outside Cairn") != std::string::npos);

  auto no_refresh = Opts();
  no_refresh.refresh = false;
  CHECK(Find(MakePlan(cfg, st, live, Kinds(), no_refresh).plan, "network.core").action ==
        Action::kNoOp);
}

TEST_CASE("live values win over state values when refreshing") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("instance.api", {{"name", "api"}, {"region", "eu"}, {"plan", "s-1vcpu-1gb"}}));
  StateSnapshot st;
  st.resources["instance.api"] =
      St("instance.api", "i1", {{"name", "api"}, {"region", "eu"}, {"plan", "s-1vcpu-1gb"}});
  LiveView live;
  live["instance.api"] =
      Value{{"id", "i1"}, {"name", "api"}, {"region", "eu"}, {"plan", "s-4vcpu-8gb"}};
  auto r = MakePlan(cfg, st, live, Kinds(), Opts());
  const auto& c = Find(r.plan, "instance.api");
  CHECK(c.action == Action::kUpdate);
  CHECK(c.changes[0].before == "s-4vcpu-8gb");
}

TEST_CASE("a target keeps itself and its dependencies only") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web[0]", {{"name", "web-0"}, {"region", "eu"}}, {"network.core"}));
  cfg.resources.push_back(
      Res("instance.web[1]", {{"name", "web-1"}, {"region", "eu"}}, {"network.core"}));
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  auto opts = Opts();
  opts.targets = {"instance.web[1]"};
  auto r = MakePlan(cfg, {}, {}, Kinds(), opts);
  std::vector<std::string> addrs;
  for (const auto& c : r.plan.changes) addrs.push_back(c.address);
  CHECK(addrs == std::vector<std::string>{"network.core", "instance.web[1]"});
  opts.targets = {"instance.web"};
  CHECK(MakePlan(cfg, {}, {}, Kinds(), opts).plan.changes.size() == 3);
}

TEST_CASE("a module target keeps every resource in the module and their dependencies") {
  StackConfig cfg;
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  cfg.resources.push_back(
      Res("network.other", {{"name", "o"}, {"region", "eu"}, {"cidr", "10.9.0.0/16"}}));
  for (const char* m : {"module.app[0]", "module.app[1]"}) {
    std::string net = std::string(m) + ".network.main";
    cfg.resources.push_back(Res(net, {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
    cfg.resources.push_back(Res(std::string(m) + ".module.db.instance.web",
                                {{"name", "w"}, {"region", "eu"}}, {net, "ssh_key.k"}));
  }
  auto opts = Opts();
  auto addresses = [&](std::vector<std::string> targets) {
    opts.targets = std::move(targets);
    auto r = MakePlan(cfg, {}, {}, Kinds(), opts);
    INFO(r.diagnostics.size());
    std::vector<std::string> out;
    for (const auto& c : r.plan.changes) out.push_back(c.address);
    std::sort(out.begin(), out.end());
    return out;
  };
  // One instance: its resources, nested modules included, and the key.
  CHECK(addresses({"module.app[1]"}) ==
        std::vector<std::string>{"module.app[1].module.db.instance.web",
                                 "module.app[1].network.main", "ssh_key.k"});
  // The module without an index: every instance.
  CHECK(addresses({"module.app"}).size() == 5);
  CHECK(addresses({"module.app[0].module.db"}) ==
        std::vector<std::string>{"module.app[0].module.db.instance.web",
                                 "module.app[0].network.main", "ssh_key.k"});
  opts.targets = {"module.nope"};
  auto bad = MakePlan(cfg, {}, {}, Kinds(), opts);
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "unknown_target");
}

TEST_CASE("planned changes carry their address parsed, a deposed object's as its resource's") {
  StackConfig cfg;
  cfg.resources.push_back(Res("module.app[1].network.main",
                              {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(Res("instance.web[0]", {{"name", "web-0"}, {"region", "eu"}}));
  StateSnapshot st;
  // A create_before_destroy replace of web[0] left its old object behind.
  st.resources["instance.web[0] (deposed)"] =
      St("instance.web[0]", "old", {{"name", "web-0"}, {"region", "eu"}});
  st.resources["instance.web[0] (deposed)"].address = "instance.web[0] (deposed)";
  st.resources["ssh_key.gone"] = St("ssh_key.gone", "k1", {{"name", "gone"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  const auto& net = Find(r.plan, "module.app[1].network.main");
  REQUIRE(net.parsed_address.module.size() == 1);
  CHECK(net.parsed_address.module[0] == ModuleStep{"app", 1});
  CHECK(net.parsed_address.ToString() == net.address);
  const auto& deposed = Find(r.plan, "instance.web[0] (deposed)");
  CHECK(deposed.action == Action::kDelete);
  CHECK(deposed.parsed_address.ToString() == "instance.web[0]");
  CHECK(Find(r.plan, "ssh_key.gone").parsed_address.ToString() == "ssh_key.gone");

  // --target takes a resource's deposed object with it, by index or not.
  auto opts = Opts();
  for (const char* target : {"instance.web[0]", "instance.web"}) {
    opts.targets = {target};
    auto t = MakePlan(cfg, st, {}, Kinds(), opts);
    REQUIRE(t.ok());
    std::vector<std::string> addrs;
    for (const auto& c : t.plan.changes) addrs.push_back(c.address);
    std::sort(addrs.begin(), addrs.end());
    CHECK(addrs == std::vector<std::string>{"instance.web[0]", "instance.web[0] (deposed)"});
  }

  // So does a module target, for the objects deposed in the module.
  StateSnapshot in_module;
  in_module.resources["module.app[1].network.main (deposed)"] =
      St("network.main", "n-old", {{"name", "n"}});
  in_module.resources["module.app[1].network.main (deposed)"].address =
      "module.app[1].network.main (deposed)";
  opts.targets = {"module.app"};
  auto m = MakePlan(cfg, in_module, {}, Kinds(), opts);
  REQUIRE(m.ok());
  std::vector<std::string> in_app;
  for (const auto& c : m.plan.changes) in_app.push_back(c.address);
  std::sort(in_app.begin(), in_app.end());
  CHECK(in_app == std::vector<std::string>{"module.app[1].network.main",
                                           "module.app[1].network.main (deposed)"});

  // A saved plan read back carries it too.
  auto back = PlanFromJson(PlanToJson(r.plan));
  REQUIRE(back.ok());
  bool found = false;
  for (const auto& c : back->changes) {
    if (c.address != "instance.web[0] (deposed)") continue;
    found = true;
    CHECK(c.parsed_address.ToString() == "instance.web[0]");
  }
  CHECK(found);
}

namespace {

// A stack like examples/web: a key and a network, instances using both, a
// volume and a firewall using an instance. All of it applied.
struct WebStack {
  StackConfig cfg;
  StateSnapshot st;
  WebStack() {
    cfg.resources.push_back(Res("ssh_key.deploy", {{"name", "deploy"}}));
    cfg.resources.push_back(Res("network.core", {{"name", "core"}}));
    for (int i = 0; i < 2; ++i) {
      std::string a = "instance.app[" + std::to_string(i) + "]";
      cfg.resources.push_back(Res(a, {{"name", "app"}}, {"network.core", "ssh_key.deploy"}));
    }
    cfg.resources.push_back(Res("volume.data[\"db\"]", {{"name", "db"}}, {"instance.app[0]"}));
    cfg.resources.push_back(
        Res("firewall.web", {{"name", "web"}}, {"instance.app[0]", "instance.app[1]"}));
    for (const auto& rc : cfg.resources) {
      std::vector<std::string> deps;
      for (const auto& d : rc.depends_on) deps.push_back(d.ToString());
      st.resources[rc.address.ToString()] =
          St(rc.address.ToString(), "id-" + rc.address.ToString(), rc.spec, deps);
    }
  }
  static KindCatalog AllKinds() {
    KindCatalog k = Kinds();
    k["volume"] = {{"region"}, {"id", "status"}, {{"instance", "instance"}}};
    k["firewall"] = {{}, {"id"}, {{"instances", "instance"}}};
    return k;
  }
  std::vector<std::string> Planned(PlanOptions o) const {
    auto r = MakePlan(cfg, st, {}, AllKinds(), o);
    std::vector<std::string> out;
    for (const auto& c : r.plan.changes) {
      if (c.action != Action::kNoOp) out.push_back(c.address);
    }
    return out;
  }
};

}  // namespace

TEST_CASE(
    "destroying a target destroys it and its dependents, dependents first, never its "
    "dependencies") {
  WebStack web;
  auto o = Opts();
  o.destroy = true;
  // Nothing depends on the volume: only the volume (this deleted an
  // instance, the firewall and the key).
  o.targets = {"volume.data[\"db\"]"};
  CHECK(web.Planned(o) == std::vector<std::string>{"volume.data[\"db\"]"});
  // Everything using the key goes, dependents first; the network stays.
  o.targets = {"ssh_key.deploy"};
  auto planned = web.Planned(o);
  auto pos = [&](const std::string& a) {
    return std::find(planned.begin(), planned.end(), a) - planned.begin();
  };
  CHECK(std::set<std::string>(planned.begin(), planned.end()) ==
        std::set<std::string>{"firewall.web", "volume.data[\"db\"]", "instance.app[0]",
                              "instance.app[1]", "ssh_key.deploy"});
  CHECK(pos("firewall.web") < pos("instance.app[0]"));
  CHECK(pos("volume.data[\"db\"]") < pos("instance.app[0]"));
  CHECK(pos("instance.app[1]") < pos("ssh_key.deploy"));
  CHECK(planned.back() == "ssh_key.deploy");
  // A base address selects every instance, with their dependents.
  o.targets = {"instance.app"};
  planned = web.Planned(o);
  CHECK(std::set<std::string>(planned.begin(), planned.end()) ==
        std::set<std::string>{"firewall.web", "volume.data[\"db\"]", "instance.app[0]",
                              "instance.app[1]"});
}

TEST_CASE("deleting a target gone from the manifests also deletes what was built on it") {
  WebStack web;
  // The network and the instances are removed from the manifests.
  std::erase_if(web.cfg.resources, [](const ResourceConfig& rc) {
    return rc.kind == "network" || rc.kind == "instance" || rc.kind == "volume" ||
           rc.kind == "firewall";
  });
  auto o = Opts();
  o.targets = {"network.core"};
  auto planned = web.Planned(o);
  CHECK(planned.back() == "network.core");
  CHECK(std::count(planned.begin(), planned.end(), "instance.app[1]") == 1);
  CHECK(std::count(planned.begin(), planned.end(), "ssh_key.deploy") == 0);
}

TEST_CASE("a target that is not an address or names nothing is an error with a suggestion") {
  WebStack web;
  auto o = Opts();
  for (const char* bad : {"foo", "instance.app[", "instance.nope", "instance.app[7]"}) {
    INFO(bad);
    o.targets = {bad};
    auto r = MakePlan(web.cfg, web.st, {}, WebStack::AllKinds(), o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].summary.find(std::string("\"") + bad + "\"") != std::string::npos);
  }
  o.targets = {"instance.nope"};
  CHECK(MakePlan(web.cfg, web.st, {}, WebStack::AllKinds(), o).diagnostics[0].detail ==
        "did you mean \"instance.app\"?");
  o.targets = {"instance.app["};
  CHECK(MakePlan(web.cfg, web.st, {}, WebStack::AllKinds(), o).diagnostics[0].code ==
        "invalid_target");
  // Known but with nothing to do is not an error.
  o.targets = {"network.core"};
  auto fine = MakePlan(web.cfg, web.st, {}, WebStack::AllKinds(), o);
  CHECK(fine.ok());
}

TEST_CASE("a plan survives its JSON form, and a foreign format version is refused") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("instance.api", {{"name", "api"}, {"region", "eu"}, {"plan", "s-2vcpu-4gb"}}));
  StateSnapshot st;
  st.lineage = "lin-1";
  st.serial = 7;
  st.resources["instance.api"] =
      St("instance.api", "i1", {{"name", "api"}, {"region", "eu"}, {"plan", "s-1vcpu-1gb"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  Value j = PlanToJson(r.plan);
  CHECK(j["summary"]["change"] == 1);
  auto back = PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->serial == 7);
  CHECK(back->lineage == "lin-1");
  CHECK(PlanToJson(*back) == j);
  CHECK_FALSE(j.contains("variables"));  // only saved plans carry them

  Plan saved = r.plan;
  saved.variables = {{"size", "s-2vcpu-4gb"}, {"replicas", 3}, {"zones", Value::array({"a", "b"})}};
  Value sj = PlanToJson(saved);
  auto saved_back = PlanFromJson(sj);
  REQUIRE(saved_back.ok());
  CHECK(saved_back->variables == saved.variables);
  sj["variables"] = "size=big";
  CHECK(PlanFromJson(sj).status().code() == StatusCode::kInvalidArgument);

  j["format_version"] = 99;
  auto bad = PlanFromJson(j);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("99") != std::string::npos);
  CHECK_FALSE(PlanFromJson(Value{{"x", 1}}).ok());
}

TEST_CASE("a plan's JSON text is its JSON value as dump(2) prints it, byte for byte") {
  // PlanToJsonText prints the changes one at a time; every member a plan
  // can have is here, strings that need escaping too.
  Plan plan;
  CHECK(PlanToJsonText(plan) == PlanToJson(plan).dump(2));
  plan.stack = "/stacks/web \"prod\"";
  plan.lineage = "lin-1";
  plan.serial = 12;
  ConditionConfig cond{"${self.size > 1}", "too small:\n\tgrow it \u00e9", {"main.yaml", 3, 5, 7}};
  PlannedChange create;
  create.address = "instance.web[\"a\"]";
  create.kind = "instance";
  create.action = Action::kCreate;
  create.after = {{"name", "web"}, {"network", "${network.core.id}"}, {"tags", {"a", "b"}}};
  create.changes = {{"name", nullptr, "web", false},
                    {"tags", nullptr, Value::array({"a", "b"}), false},
                    {"empty", nullptr, Value::object(), false}};
  create.depends_on = {"network.core"};
  create.moved_from = "instance.old";
  create.preconditions = {cond};
  create.postconditions = {cond, cond};
  PlannedChange replace;
  replace.address = "network.core";
  replace.kind = "network";
  replace.action = Action::kReplace;
  replace.remote_id = "n1";
  replace.before = {{"cidr", "10.0.0.0/16"}, {"size", 1.5}, {"n", -3}};
  replace.after = {{"cidr", "10.1.0.0/16"}};
  replace.changes = {{"cidr", "10.0.0.0/16", "10.1.0.0/16", true}};
  replace.replace_fields = {"cidr"};
  replace.replace_reason = "tainted";
  replace.replace_order = ReplaceOrder::kCreateThenDelete;
  replace.prior_depends_on = {"vpc.x", "vpc.y"};
  replace.note = "deleted outside Cairn; \x01";
  plan.changes = {create, replace, PlannedChange{}};
  plan.outputs = {{"ip", "${instance.web.ipv4}", false, {cond}}, {"pw", "hunter2", true, {}}};
  plan.output_changes = {{"ip", Action::kUpdate, "1.2.3.4", UnknownValue(), false},
                         {"pw", Action::kCreate, nullptr, "x", true}};
  plan.checks = {{"health", {cond}, {"checks.yaml", 1, 1, 1}}};
  plan.check_results = {{"health", CheckResult::Status::kFailed, {"down", "still down"}}};
  plan.data = {{"data.image.debian", {{"id", "img-1"}}}};
  plan.moves = {{"instance.old", "instance.web[\"a\"]"}};
  plan.pending = {{"instance.x", "instance", Action::kDelete, "i9", "then destroyed"}};
  plan.saved = true;
  plan.variables = {
      {"size", "big"}, {"zones", Value::array({"a", "b"})}, {"none", Value::object()}};
  plan.sensitive_variables = {"zones"};
  plan.backend.type = "sqlite";
  plan.backend.path = ".cairn/state.db";
  plan.manifests = {{"main.yaml", "sha256:00"}};
  plan.recursive = true;
  CHECK(PlanToJsonText(plan) == PlanToJson(plan).dump(2));
  // Members added at the top level take their place in key order.
  Value members = {{"policy_results", Value::array({{{"policy", "p"}, {"passed", true}}})},
                   {"aaa", Value::object()},
                   {"zzz", 1}};
  Value whole = PlanToJson(plan);
  for (const auto& [key, value] : members.items()) whole[key] = value;
  CHECK(PlanToJsonText(plan, members) == whole.dump(2));
  // And a plan made by MakePlan, creates with their fields.
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  auto r = MakePlan(cfg, {}, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(PlanToJsonText(r.plan) == PlanToJson(r.plan).dump(2));
  // Many changes: the text's buffer is sized from the first 64, and the
  // later ones here are far larger than those, so it grows past it too.
  Plan many;
  for (int i = 0; i < 400; ++i) {
    PlannedChange c;
    c.address = "instance.n" + std::to_string(i);
    c.kind = "instance";
    c.action = Action::kCreate;
    c.after = {{"name", std::string(i < 100 ? 1 : 2000, 'x')}};
    many.changes.push_back(std::move(c));
  }
  const std::string text = PlanToJsonText(many);
  CHECK(text.size() > 300 * 2000);
  CHECK(text == PlanToJson(many).dump(2));
}

TEST_CASE("a saved plan's format_version and serial must be integers in range") {
  // Found by saved_plan_fuzz (tests/fuzz/regressions/saved_plan/): a float
  // format_version out of int's range was converted regardless.
  Value j = PlanToJson(Plan{});
  REQUIRE(PlanFromJson(j).ok());
  for (const char* version : {"1.3e124", "1.0", "-1e30", "\"1\"", "null", "18446744073709551617"}) {
    Value bad = j;
    bad["format_version"] = Value::parse(version);
    auto r = PlanFromJson(bad);
    INFO(version);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("is not supported") != std::string::npos);
  }
  for (const char* serial : {"1e30", "-1", "18446744073709551615", "2.5", "\"7\""}) {
    Value bad = j;
    bad["serial"] = Value::parse(serial);
    auto r = PlanFromJson(bad);
    INFO(serial);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("malformed plan") != std::string::npos);
  }
}

TEST_CASE("sensitive variable values are masked in the text report") {
  StackConfig cfg;
  cfg.resources.push_back(Res("instance.api", {{"name", "api-hush-hush"}, {"region", "eu"}}));
  cfg.variables["secret_suffix"] = "hush-hush";
  cfg.sensitive_variables = {"secret_suffix"};
  StateSnapshot st;
  st.resources["instance.api"] = St("instance.api", "i1", {{"name", "api"}, {"region", "eu"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  std::string text = RenderPlanText(r.plan);
  CHECK(text.find("hush-hush") == std::string::npos);
  CHECK(text.find("(sensitive)") != std::string::npos);
}

TEST_CASE("creates and deletes of a count list web[2] before web[10]") {
  StackConfig cfg;
  StateSnapshot st;
  for (int i = 0; i < 12; ++i) {
    std::string a = "instance.web[" + std::to_string(i) + "]";
    cfg.resources.push_back(Res(a, {{"name", "web"}}));
    st.resources["instance.old[" + std::to_string(i) + "]"] =
        St("instance.old[" + std::to_string(i) + "]", "i" + std::to_string(i), {{"name", "old"}});
  }
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  std::vector<std::string> creates, deletes;
  for (const auto& c : r.plan.changes) {
    (c.action == Action::kCreate ? creates : deletes).push_back(c.address);
  }
  REQUIRE(creates.size() == 12);
  CHECK(creates[2] == "instance.web[2]");
  CHECK(creates[10] == "instance.web[10]");
  REQUIRE(deletes.size() == 12);
  CHECK(deletes[2] == "instance.old[2]");
  CHECK(deletes[11] == "instance.old[11]");
}

TEST_CASE(
    "lowering a grow-only field is an error at plan time, unless --replace asks for a new one") {
  KindCatalog kinds = Kinds();
  kinds["volume"] = {{"region"}, {"id", "status"}, {}, {"size_gb"}};
  StackConfig cfg;
  cfg.resources.push_back(Res("volume.data", {{"name", "data"}, {"size_gb", 10}}));
  StateSnapshot st;
  st.resources["volume.data"] = St("volume.data", "v1", {{"name", "data"}, {"size_gb", 50}});
  auto shrink = MakePlan(cfg, st, {}, kinds, Opts());
  REQUIRE_FALSE(shrink.ok());
  CHECK(shrink.diagnostics[0].code == "cannot_shrink");
  CHECK(shrink.diagnostics[0].summary ==
        "volume.data: size_gb cannot shrink from 50 to 10: the API only lets it grow");
  CHECK(shrink.diagnostics[0].detail.find("--replace 'volume.data'") != std::string::npos);

  // Growing is an update in place.
  cfg.resources[0].spec["size_gb"] = 80;
  auto grow = MakePlan(cfg, st, {}, kinds, Opts());
  REQUIRE(grow.ok());
  CHECK(Find(grow.plan, "volume.data").action == Action::kUpdate);

  // Asked for, the shrink is a replace.
  cfg.resources[0].spec["size_gb"] = 10;
  auto o = Opts();
  o.replace = {"volume.data"};
  auto replaced = MakePlan(cfg, st, {}, kinds, o);
  REQUIRE(replaced.ok());
  CHECK(Find(replaced.plan, "volume.data").action == Action::kReplace);
  CHECK(Find(replaced.plan, "volume.data").replace_reason ==
        "replacement requested with --replace");
  o.replace = {"volume.dta"};
  auto typo = MakePlan(cfg, st, {}, kinds, o);
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.diagnostics.front().detail == "did you mean \"volume.data\"?");
}

TEST_CASE("a module path given to --replace takes every resource in it") {
  StackConfig cfg;
  StateSnapshot st;
  for (const char* m : {"module.app[0]", "module.app[1]"}) {
    std::string net = std::string(m) + ".network.main";
    Value spec = {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
    cfg.resources.push_back(Res(net, spec));
    st.resources[net] = St(net, std::string("id-") + m, spec);
  }
  Value key = {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}};
  cfg.resources.push_back(Res("ssh_key.k", key));
  st.resources["ssh_key.k"] = St("ssh_key.k", "k1", key);
  auto replaced = [&](std::vector<std::string> replace) {
    auto o = Opts();
    o.replace = std::move(replace);
    auto r = MakePlan(cfg, st, {}, Kinds(), o);
    REQUIRE(r.ok());
    std::vector<std::string> out;
    for (const auto& c : r.plan.changes) {
      if (c.action == Action::kReplace) out.push_back(c.address);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(replaced({"module.app[1]"}) == std::vector<std::string>{"module.app[1].network.main"});
  CHECK(replaced({"module.app"}) ==
        std::vector<std::string>{"module.app[0].network.main", "module.app[1].network.main"});
  CHECK(replaced({}).empty());
  auto o = Opts();
  o.replace = {"module.nope"};
  auto bad = MakePlan(cfg, st, {}, Kinds(), o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.diagnostics.front().code == "unknown_target");
}

TEST_CASE("a create shows the fields it sets, unknown ones as (known after apply)") {
  StackConfig cfg;
  cfg.resources.push_back(Res("network.core", {{"name", "core"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"network", "${network.core.id}"}}, {"network.core"}));
  auto r = MakePlan(cfg, {}, {}, Kinds(), Opts());
  std::string text = RenderPlanText(r.plan);
  CHECK(text.find(
            "  + network.core   create\n      + cidr: \"10.0.0.0/16\"\n      + name: \"core\"\n") !=
        std::string::npos);
  CHECK(text.find("      + network: (known after apply)\n") != std::string::npos);
  std::string md = RenderPlanMarkdown(r.plan);
  CHECK(md.find("`cidr`: `\"10.0.0.0/16\"`") != std::string::npos);
}

TEST_CASE("an unchanged resource's planned values are the state's with the spec's fields") {
  // 1 and 1.0 compare equal, so the network is unchanged, and expressions
  // read either as 1; what refers to it sees the status the state holds
  // beside the spec's fields.
  StackConfig cfg;
  cfg.resources.push_back(Res("network.core", {{"name", "core"}, {"size", 1}}));
  cfg.outputs.push_back({"size", Value("${network.core.size}"), false, {}});
  cfg.outputs.push_back({"status", Value("${network.core.status}"), false, {}});
  cfg.outputs.push_back(
      {"text", Value("v${network.core.size} ${jsonencode(network.core)}"), false, {}});
  StateSnapshot st;
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"size", 1.0}, {"status", "active"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(Find(r.plan, "network.core").action == Action::kNoOp);
  REQUIRE(r.plan.output_changes.size() == 3);
  CHECK(r.plan.output_changes[0].name == "size");
  CHECK(r.plan.output_changes[0].after.dump() == "1");
  CHECK(r.plan.output_changes[1].name == "status");
  CHECK(r.plan.output_changes[1].after == "active");
  CHECK(r.plan.output_changes[2].after ==
        "v1 {\"id\":\"n1\",\"name\":\"core\",\"size\":1,\"status\":\"active\"}");
}

TEST_CASE("output changes are changes: added, changed, known after apply, removed") {
  StackConfig cfg;
  cfg.resources.push_back(Res("network.core", {{"name", "core"}}));
  cfg.outputs.push_back({"net", Value("${network.core.id}"), false, {}});
  cfg.outputs.push_back({"greeting", Value("hello"), false, {}});
  cfg.outputs.push_back({"secret", Value("s3cr3t-value"), true, {}});
  StateSnapshot st;
  st.resources["network.core"] = St("network.core", "n1", {{"name", "core"}});
  st.outputs = {{"net", "n1"}, {"greeting", "hi"}, {"secret", "s3cr3t-value"}, {"gone", 1}};
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(r.plan.has_changes());  // no resource changes, yet not "No changes"
  REQUIRE(r.plan.output_changes.size() == 2);
  CHECK(r.plan.output_changes[0].name == "greeting");
  CHECK(r.plan.output_changes[0].action == Action::kUpdate);
  CHECK(r.plan.output_changes[1].name == "gone");
  CHECK(r.plan.output_changes[1].action == Action::kDelete);
  std::string text = RenderPlanText(r.plan);
  CHECK(text.find("Changes to outputs:\n  ~ greeting: \"hi\" -> \"hello\"\n  - gone\n") !=
        std::string::npos);
  CHECK(text.find("No changes") == std::string::npos);
  // A survivor of the JSON form.
  auto back = PlanFromJson(PlanToJson(r.plan));
  REQUIRE(back.ok());
  CHECK(back->output_changes.size() == 2);
  // A changed sensitive output never shows its value.
  st.outputs["secret"] = "old-value-xyz";
  auto masked = MakePlan(cfg, st, {}, Kinds(), Opts());
  std::string shown =
      RenderPlanText(masked.plan) + PlanToJson(masked.plan)["output_changes"].dump();
  CHECK(shown.find("s3cr3t-value") == std::string::npos);
  CHECK(shown.find("old-value-xyz") == std::string::npos);
  CHECK(RenderPlanText(masked.plan).find("~ secret: (sensitive) -> (sensitive)") !=
        std::string::npos);
}

TEST_CASE("a targeted destroy removes only the outputs that refer to what it destroys") {
  StackConfig cfg;
  cfg.resources.push_back(Res("network.a", {{"name", "a"}}));
  cfg.resources.push_back(Res("network.b", {{"name", "b"}}));
  cfg.resources.push_back(Res("network.c", {{"name", "c"}}));  // never applied
  cfg.outputs.push_back({"a_id", Value("${network.a.id}"), false, {}});
  cfg.outputs.push_back({"b_id", Value("${network.b.id}"), false, {}});
  cfg.outputs.push_back({"both", Value("${network.a.id},${network.b.id}"), false, {}});
  cfg.outputs.push_back({"c_name", Value("${network.c.name}"), false, {}});
  cfg.outputs.push_back({"greeting", Value("hello"), false, {}});
  StateSnapshot st;
  st.resources["network.a"] = St("network.a", "n-a", {{"name", "a"}});
  st.resources["network.b"] = St("network.b", "n-b", {{"name", "b"}});
  st.outputs = {{"a_id", "n-a"}, {"b_id", "n-b"}, {"both", "n-a,n-b"}, {"greeting", "hello"}};
  auto o = Opts();
  o.destroy = true;
  o.targets = {"network.b"};
  auto r = MakePlan(cfg, st, {}, Kinds(), o);
  REQUIRE(r.ok());
  REQUIRE(r.plan.changes.size() == 1);
  CHECK(r.plan.changes[0].address == "network.b");
  std::vector<std::string> kept;
  for (const auto& out : r.plan.outputs) kept.push_back(out.name);
  CHECK(kept == std::vector<std::string>{"a_id", "greeting"});
  REQUIRE(r.plan.output_changes.size() == 2);
  CHECK(r.plan.output_changes[0].name == "b_id");
  CHECK(r.plan.output_changes[0].action == Action::kDelete);
  CHECK(r.plan.output_changes[1].name == "both");
  CHECK(r.plan.output_changes[1].action == Action::kDelete);
  CHECK(RenderPlanText(r.plan).find("- a_id") == std::string::npos);
  // The JSON form (a saved plan) keeps them for apply.
  auto back = PlanFromJson(PlanToJson(r.plan));
  REQUIRE(back.ok());
  CHECK(back->outputs.size() == 2);

  // A whole destroy removes every output.
  o.targets.clear();
  auto all = MakePlan(cfg, st, {}, Kinds(), o);
  REQUIRE(all.ok());
  CHECK(all.plan.outputs.empty());
  CHECK(all.plan.output_changes.size() == 4);
}

TEST_CASE("the journal's pending operations are part of the plan: text, Markdown and JSON") {
  StackConfig cfg;
  cfg.resources.push_back(Res("network.core", {{"name", "core"}}));
  cfg.resources.push_back(Res("instance.web[0]", {{"name", "web-0"}}));
  StateSnapshot st;
  st.resources["network.core"] = St("network.core", "n1", {{"name", "core"}});
  JournalEntry web0, web7, old;
  web0 = {.seq = 3, .address = "instance.web[0]", .action = Action::kCreate, .kind = "instance"};
  web7 = {.seq = 4, .address = "instance.web[7]", .action = Action::kCreate, .kind = "instance"};
  old = {.seq = 5,
         .address = "ssh_key.old",
         .action = Action::kDelete,
         .kind = "ssh_key",
         .remote_id = "key_1"};
  auto o = Opts();
  o.pending = {web0, web7, old};
  auto r = MakePlan(cfg, st, {}, Kinds(), o);
  REQUIRE(r.ok());
  REQUIRE(r.plan.pending.size() == 3);
  CHECK(r.plan.pending[0].note.empty());  // declared: compared again once made
  CHECK(r.plan.pending[1].note == "then destroyed: no longer in the manifests");
  CHECK(r.plan.pending[2].action == Action::kDelete);
  CHECK(r.plan.counts().pending == 3);
  CHECK(Find(r.plan, "instance.web[0]").note ==
        "an interrupted create of it completes first, and apply plans it again after that");
  std::string text = RenderPlanText(r.plan);
  CHECK(text.rfind(
            "Interrupted operations, which 'cairn apply' completes first (then it plans again):\n"
            "  + instance.web[0]   create\n"
            "  + instance.web[7]   create  # then destroyed: no longer in the manifests\n"
            "  - ssh_key.old       delete (id key_1)\n"
            "The changes below are against the state as it is before them:\n"
            "  + instance.web[0]   create\n",
            0) == 0);
  CHECK(text.find("Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy, after 3 interrupted "
                  "operations to complete.") != std::string::npos);
  CHECK(RenderPlanMarkdown(r.plan).find(
            "| create (interrupted, completes first) | `instance.web[7]` |") != std::string::npos);
  Value j = PlanToJson(r.plan);
  CHECK(j["summary"]["pending"] == 3);
  REQUIRE(j["pending_operations"].size() == 3);
  CHECK(j["pending_operations"][2] == Value({{"address", "ssh_key.old"},
                                             {"kind", "ssh_key"},
                                             {"action", "delete"},
                                             {"remote_id", "key_1"},
                                             {"note", ""}}));
  auto back = PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->pending.size() == 3);

  // Nothing else to do: still not "No changes".
  StackConfig none;
  auto only = MakePlan(none, {}, {}, Kinds(), o);
  CHECK(only.plan.has_changes());
  CHECK(RenderPlanText(only.plan).find("No changes") == std::string::npos);
  // A whole destroy destroys what they make too.
  o.destroy = true;
  auto destroy = MakePlan(cfg, st, {}, Kinds(), o);
  CHECK(destroy.plan.pending[0].note == "then destroyed");
}

TEST_CASE("a destroy with nothing in the state says so") {
  auto o = Opts();
  o.destroy = true;
  auto r = MakePlan({}, {}, {}, Kinds(), o);
  CHECK(RenderPlanText(r.plan) ==
        "No changes. Nothing to destroy: the state tracks no resources.\n");
}

TEST_CASE("Markdown plans escape | and backticks in cells") {
  Plan p;
  PlannedChange c;
  c.address = "instance.web[\"a|b\"]";
  c.kind = "instance";
  c.action = Action::kUpdate;
  c.changes.push_back({"name", "x`y", "p|q", false});
  p.changes.push_back(c);
  std::string md = RenderPlanMarkdown(p);
  INFO(md);
  std::string row = md.substr(md.find("| update |"));
  row = row.substr(0, row.find('\n'));
  // Cells: action, address, details; every | inside them is escaped.
  size_t unescaped = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++unescaped;
  }
  CHECK(unescaped == 4);
  CHECK(row.find("`` \"x`y\" ``") != std::string::npos);
  CHECK(row.find("`instance.web[\"a\\|b\"]`") != std::string::npos);
}

TEST_CASE("moved: a renamed resource is compared at its new address, and the move is the change") {
  StackConfig cfg;
  Value core = {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
  cfg.resources.push_back(Res("network.main", core));
  cfg.resources.push_back(Res("instance.app[0]", {{"name", "w0"}, {"region", "eu"}}));
  cfg.resources.push_back(Res("instance.app[1]", {{"name", "w1-new"}, {"region", "eu"}}));
  cfg.moved.push_back({*ResourceAddress::Parse("network.core"),
                       *ResourceAddress::Parse("network.main"),
                       {"main.yaml", 9, 1, 1}});
  cfg.moved.push_back({*ResourceAddress::Parse("instance.web"),
                       *ResourceAddress::Parse("instance.app"),
                       {"main.yaml", 12, 1, 1}});
  StateSnapshot st;
  st.resources["network.core"] = St("network.core", "n1", core);
  st.resources["instance.web[0]"] =
      St("instance.web[0]", "i0", {{"name", "w0"}, {"region", "eu"}}, {"network.core"});
  st.resources["instance.web[1]"] = St("instance.web[1]", "i1", {{"name", "w1"}, {"region", "eu"}});
  // Refreshed at the recorded addresses.
  LiveView live;
  live["instance.web[1]"] = Value{{"id", "i1"}, {"name", "w1"}, {"region", "eu"}};
  auto r = MakePlan(cfg, st, live, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(r.plan.moves == AddressMoves{{"network.core", "network.main"},
                                     {"instance.web[0]", "instance.app[0]"},
                                     {"instance.web[1]", "instance.app[1]"}});
  const auto& net = Find(r.plan, "network.main");
  CHECK(net.action == Action::kNoOp);
  CHECK(net.moved_from == "network.core");
  CHECK(net.remote_id == "n1");
  CHECK(Find(r.plan, "instance.app[0]").action == Action::kNoOp);
  const auto& w1 = Find(r.plan, "instance.app[1]");
  CHECK(w1.action == Action::kUpdate);  // compared with the live view, moved along
  CHECK(w1.remote_id == "i1");
  CHECK(w1.moved_from == "instance.web[1]");
  auto n = r.plan.counts();
  CHECK((n.add == 0 && n.destroy == 0 && n.change == 1 && n.move == 3));
  CHECK(r.plan.has_changes());
  std::string text = RenderPlanText(r.plan, {});
  INFO(text);
  CHECK(text.find("  > network.main      moved from network.core\n") != std::string::npos);
  CHECK(text.find("update in-place, moved from instance.web[1]") != std::string::npos);
  CHECK(text.find("1 to change, 0 to replace, 0 to destroy, 3 to move.") != std::string::npos);

  // Saved and read back, the moves and their origins survive.
  auto back = PlanFromJson(PlanToJson(r.plan));
  REQUIRE(back.ok());
  CHECK(back->moves == r.plan.moves);
  CHECK(Find(*back, "network.main").moved_from == "network.core");

  // Once moved (the state has the new addresses), the move is done: nothing to do.
  StateSnapshot after = ApplyMoves(st, r.plan.moves);
  CHECK(after.resources.at("instance.app[0]").depends_on ==
        std::vector<std::string>{"network.main"});
  after.resources.at("instance.app[1]").attributes["name"] = "w1-new";
  auto again = MakePlan(cfg, after, {}, Kinds(), Opts());
  REQUIRE(again.ok());
  CHECK(again.plan.moves.empty());
  CHECK_FALSE(again.plan.has_changes());
}

TEST_CASE("moved: a counted resource into a module keeps its indexes, and only its own") {
  StackConfig cfg;
  cfg.resources.push_back(Res("module.m.instance.web[0]", {{"name", "w0"}, {"region", "eu"}}));
  cfg.resources.push_back(Res("module.m.instance.web[1]", {{"name", "w1"}, {"region", "eu"}}));
  cfg.resources.push_back(Res("module.other.instance.web[0]", {{"name", "o0"}, {"region", "eu"}}));
  cfg.moved.push_back({*ResourceAddress::Parse("instance.web"),
                       *ResourceAddress::Parse("module.m.instance.web"),
                       {"main.yaml", 9, 1, 1}});
  StateSnapshot st;
  st.resources["instance.web[0]"] = St("instance.web[0]", "i0", {{"name", "w0"}, {"region", "eu"}});
  st.resources["instance.web[1]"] = St("instance.web[1]", "i1", {{"name", "w1"}, {"region", "eu"}});
  // Same kind and name in another module: not part of the move.
  st.resources["module.other.instance.web[0]"] =
      St("module.other.instance.web[0]", "o0", {{"name", "o0"}, {"region", "eu"}});
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(r.plan.moves == AddressMoves{{"instance.web[0]", "module.m.instance.web[0]"},
                                     {"instance.web[1]", "module.m.instance.web[1]"}});
  CHECK(Find(r.plan, "module.m.instance.web[1]").remote_id == "i1");
  CHECK(Find(r.plan, "module.other.instance.web[0]").action == Action::kNoOp);
  CHECK_FALSE(r.plan.counts().add);
}

TEST_CASE("moved: chains are followed, and a move onto a recorded address is an error") {
  StackConfig cfg;
  Value spec = {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}};
  cfg.resources.push_back(Res("ssh_key.c", spec));
  cfg.moved.push_back({*ResourceAddress::Parse("ssh_key.a"),
                       *ResourceAddress::Parse("ssh_key.b"),
                       {"main.yaml", 1, 1, 1}});
  cfg.moved.push_back({*ResourceAddress::Parse("ssh_key.b"),
                       *ResourceAddress::Parse("ssh_key.c"),
                       {"main.yaml", 5, 1, 1}});
  StateSnapshot st;
  st.resources["ssh_key.a"] = St("ssh_key.a", "k1", spec);
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  CHECK(r.plan.moves == AddressMoves{{"ssh_key.a", "ssh_key.c"}});
  CHECK(Find(r.plan, "ssh_key.c").moved_from == "ssh_key.a");
  CHECK(r.plan.counts().add == 0);

  st.resources["ssh_key.c"] = St("ssh_key.c", "k2", spec);
  auto taken = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE_FALSE(taken.ok());
  CHECK(taken.diagnostics[0].code == "moved_target_exists");
  CHECK(taken.diagnostics[0].location.line == 5);
}

TEST_CASE("enabled: an implied move takes count's [0] to the address without index") {
  StackConfig cfg;
  Value spec = {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}};
  cfg.resources.push_back(Res("network.core", spec));
  MovedConfig implied{*ResourceAddress::Parse("network.core[0]"),
                      *ResourceAddress::Parse("network.core"),
                      {"main.yaml", 1, 1, 1},
                      /*implicit=*/true};
  cfg.moved.push_back(implied);
  StateSnapshot st;
  st.resources["network.core[0]"] = St("network.core[0]", "n1", spec);
  auto r = MakePlan(cfg, st, {}, Kinds(), Opts());
  REQUIRE(r.ok());
  const auto& net = Find(r.plan, "network.core");
  CHECK(net.action == Action::kNoOp);  // moved, not replaced
  CHECK(net.moved_from == "network.core[0]");
  // Already at its address, or nothing at [0]: nothing to do, and no error.
  StateSnapshot there;
  there.resources["network.core"] = St("network.core", "n1", spec);
  there.resources["network.core[0]"] = St("network.core[0]", "n2", spec);
  auto both = MakePlan(cfg, there, {}, Kinds(), Opts());
  REQUIRE(both.ok());
  CHECK(Find(both.plan, "network.core").moved_from.empty());
  CHECK(Find(both.plan, "network.core[0]").action == Action::kDelete);
  auto fresh = MakePlan(cfg, {}, {}, Kinds(), Opts());
  REQUIRE(fresh.ok());
  CHECK(Find(fresh.plan, "network.core").action == Action::kCreate);
}

TEST_CASE("a residual that fails once its references are known is a plan error at the resource") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.n", {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  ResourceConfig web = Res("instance.web",
                           {{"name", "web"},
                            {"region", "eu"},
                            {"rules", Value::array({"${cidrsubnet(network.n.cidr, 8, 300)}"})},
                            {"image", "${tonumber(\"hunter2-${network.n.id}\")}"}},
                           {"network.n"});
  web.location = {"main.yaml", 7, 3, 7};
  cfg.resources.push_back(web);
  cfg.variables["pw"] = "hunter2";
  cfg.sensitive_variables = {"pw"};
  StateSnapshot st;
  st.resources["network.n"] =
      St("network.n", "n1", {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  PlanResult r = MakePlan(cfg, st, {}, Kinds(), Opts());
  CHECK_FALSE(r.ok());
  std::vector<std::string> got;
  for (const Diagnostic& d : r.diagnostics) {
    CHECK(d.location.line == 7);
    CHECK(d.location.column == 3);
    got.push_back(d.code + " " + d.summary);
  }
  for (const auto& g : got) UNSCOPED_INFO(g);
  REQUIRE(got.size() == 2);
  CHECK(got[0].find("instance.web: image: ") != std::string::npos);
  CHECK(got[0].find("hunter2") == std::string::npos);  // a sensitive variable's value, masked
  CHECK(got[0].find("(sensitive value)-n1") != std::string::npos);
  CHECK(got[1].find("instance.web: rules[0]: ") != std::string::npos);
  // The network is new: its cidr is known from the manifests, its id only
  // after apply, so only the first fails now; the second waits for apply.
  PlanResult fresh = MakePlan(cfg, {}, {}, Kinds(), Opts());
  REQUIRE(fresh.diagnostics.size() == 1);
  CHECK(fresh.diagnostics[0].code == "invalid_function_argument");
  CHECK(fresh.diagnostics[0].summary.rfind("instance.web: rules[0]: cidrsubnet(): ", 0) == 0);
}

TEST_CASE("a target pattern names every instance its [*] stands for") {
  StackConfig cfg;
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  for (const char* m : {"module.app[0]", "module.app[1]"}) {
    const std::string net = std::string(m) + ".network.main";
    cfg.resources.push_back(Res(net, {{"name", "n"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
    cfg.resources.push_back(
        Res(std::string(m) + ".instance.web", {{"name", "w"}, {"region", "eu"}}, {net}));
  }
  auto addresses = [&](std::vector<std::string> targets) {
    auto opts = Opts();
    opts.targets = std::move(targets);
    auto r = MakePlan(cfg, {}, {}, Kinds(), opts);
    CHECK(r.ok());
    std::vector<std::string> out;
    for (const auto& c : r.plan.changes) out.push_back(c.address);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(addresses({"module.app[*].network.main"}) ==
        std::vector<std::string>{"module.app[0].network.main", "module.app[1].network.main"});
  CHECK(addresses({"module.app[*].instance.web[*]"}) ==
        std::vector<std::string>{"module.app[0].instance.web", "module.app[0].network.main",
                                 "module.app[1].instance.web", "module.app[1].network.main"});
  // A pattern that matches nothing is an error, as an unknown address is.
  auto opts = Opts();
  opts.targets = {"module.db[*].network.main"};
  auto r = MakePlan(cfg, {}, {}, Kinds(), opts);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "unknown_target");
}

TEST_CASE("an exclusion holds back what it names and what cannot be done without it") {
  WebStack web;
  // Everything is new: excluding an instance holds back what is built on
  // it (the volume on app[0], the firewall on both), not what it is built
  // on.
  StateSnapshot empty;
  auto planned = [&](const StateSnapshot& st, std::vector<std::string> excludes,
                     bool destroy = false) {
    auto o = Opts();
    o.excludes = std::move(excludes);
    o.destroy = destroy;
    auto r = MakePlan(web.cfg, st, {}, WebStack::AllKinds(), o);
    CHECK(r.ok());
    std::set<std::string> out;
    for (const auto& c : r.plan.changes) {
      if (c.action != Action::kNoOp) out.insert(c.address);
    }
    return out;
  };
  CHECK(planned(empty, {"instance.app[0]"}) ==
        std::set<std::string>{"ssh_key.deploy", "network.core", "instance.app[1]"});
  CHECK(planned(empty, {"instance.app[*]"}) ==
        std::set<std::string>{"ssh_key.deploy", "network.core"});
  CHECK(planned(empty, {"volume.data"}) ==
        std::set<std::string>{"ssh_key.deploy", "network.core", "instance.app[0]",
                              "instance.app[1]", "firewall.web"});
  // A destroy that keeps the volume keeps what it depends on, and what
  // that depends on: app[0], the network and the key.
  CHECK(planned(web.st, {"volume.data[\"db\"]"}, true) ==
        std::set<std::string>{"firewall.web", "instance.app[1]"});
  // An exclusion that names nothing is an error.
  auto o = Opts();
  o.excludes = {"instance.nope"};
  auto r = MakePlan(web.cfg, web.st, {}, WebStack::AllKinds(), o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "unknown_target");
  CHECK(r.diagnostics[0].summary.starts_with("--exclude \"instance.nope\""));
}

TEST_CASE("a saved plan keeps which variables are sensitive, and masks them when read back") {
  Plan p;
  p.variables = {{"env", "prod"}, {"db", Value({{"password", "s3cret-pw"}, {"port", 5432}})}};
  p.sensitive_variables = {"db"};
  auto back = PlanFromJson(PlanToJson(p));
  REQUIRE(back.ok());
  CHECK(back->sensitive_variables == std::vector<std::string>{"db"});
  CHECK(back->sensitive_values == std::vector<std::string>{"s3cret-pw"});
  CHECK(RenderValue("u:s3cret-pw@h", back->sensitive_values) == "(sensitive)");
  CHECK(RenderValue("prod", back->sensitive_values) == "\"prod\"");
}

TEST_CASE("a plan made on several threads is the plan made on one, in the manifests' order") {
  // Two networks, then 1,200 instances in one wave of the graph (each
  // depends on a network alone), which several threads plan at once:
  // unchanged, updated, created on a network made by the same plan,
  // replaced, some with a precondition on their network that fails; and
  // what the state holds beyond them, deleted.
  StackConfig cfg;
  StateSnapshot st;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  st.resources["network.core"] =
      St("network.core", "n1", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
  cfg.resources.push_back(
      Res("network.edge", {{"name", "edge"}, {"region", "eu"}, {"cidr", "10.1.0.0/16"}}));
  for (int i = 0; i < 1200; ++i) {
    const std::string addr = "instance.web[" + std::to_string(i) + "]";
    const std::string name = "web-" + std::to_string(i);
    const bool on_edge = i % 4 == 2;
    ResourceConfig rc = Res(addr,
                            {{"name", name},
                             {"region", "eu"},
                             {"image", "debian-12"},
                             {"network", on_edge ? "${network.edge.id}" : "${network.core.id}"}},
                            {on_edge ? "network.edge" : "network.core"});
    if (i % 50 == 0) {
      rc.lifecycle.preconditions.push_back({"${network.core.region == \"us\"}",
                                            "web " + std::to_string(i) + " must be in us",
                                            rc.location});
    }
    cfg.resources.push_back(std::move(rc));
    if (on_edge) continue;
    st.resources[addr] = St(addr, "i" + std::to_string(i),
                            {{"name", i % 4 == 1 ? name + "-old" : name},
                             {"region", "eu"},
                             {"image", i % 4 == 3 ? "debian-11" : "debian-12"},
                             {"network", "n1"}},
                            {"network.core"});
  }
  for (int i = 0; i < 300; ++i) {
    const std::string addr = "instance.old[" + std::to_string(i) + "]";
    st.resources[addr] = St(addr, "o" + std::to_string(i), {{"name", "old"}, {"network", "n1"}});
  }
  cfg.outputs = {{"fifth", "${instance.web[5].name}", false, {}, {}}};

  PlanOptions one = Opts(), several = Opts();
  one.threads = 1;
  several.threads = 4;
  PlanResult a = MakePlan(cfg, st, {}, Kinds(), one);
  PlanResult b = MakePlan(cfg, st, {}, Kinds(), several);
  const Plan::Counts counts = a.plan.counts();
  CHECK(counts.add == 1 + 300);
  CHECK(counts.change == 300);
  CHECK(counts.replace == 300);
  CHECK(counts.destroy == 300);
  REQUIRE(a.diagnostics.size() == 24);  // every 50th instance's precondition
  CHECK(a.diagnostics[0].code == "precondition_failed");
  CHECK(a.diagnostics[0].summary.find("web 0 must") != std::string::npos);
  CHECK(a.diagnostics[23].summary.find("web 1150 must") != std::string::npos);
  CHECK(Find(a.plan, "instance.web[2]").changes.size() > 0);
  CHECK(a.plan.changes[2].address == "instance.web[0]");
  CHECK(a.plan.changes[1201].address == "instance.web[1199]");

  CHECK(PlanToJson(b.plan).dump() == PlanToJson(a.plan).dump());
  REQUIRE(b.diagnostics.size() == a.diagnostics.size());
  for (size_t i = 0; i < a.diagnostics.size(); ++i) {
    CHECK(b.diagnostics[i].summary == a.diagnostics[i].summary);
  }
  CHECK(RenderPlanText(b.plan) == RenderPlanText(a.plan));
}

}  // namespace plan_test
