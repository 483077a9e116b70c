// Import's steps (engine/operations/import.h): what is refused before any
// read, reading every object first (all or none), the manifests --generate
// writes and loads back (on files in memory), and the dependencies recorded.
// tests/cli/state_commands_test.cc runs `cairn import` end to end.
#include "engine/operations/import.h"

#include <catch2/catch.hpp>
#include <cctype>

#include "base/env.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/loader.h"
#include "engine/operations/operations.h"
#include "tests/engine/support/fake_provider.h"

namespace import_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

const char* kStack =
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
    "kind: volume\nname: data\ncount: 2\n"
    "spec: {region: eu-central, size_gb: 10, instance: \"${instance.app.id}\"}\n---\n"
    "kind: instance\nname: app\n"
    "spec: {region: eu-central, image: debian-12, plan: s-1vcpu-1gb, network: "
    "\"${network.core.id}\"}\n";

LoadOptions Options(const MemEnv& env, const std::string& dir) {
  LoadOptions o;
  o.env = &env;
  o.paths = {dir};
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  return o;
}

LoadResult Load(const MemEnv& env, const std::string& dir) {
  LoadResult r = LoadStack(Options(env, dir));
  REQUIRE(r.ok());
  return r;
}

ImportItem Item(const std::string& address, const std::string& id) {
  return {*ResourceAddress::Parse(address), id};
}

}  // namespace

TEST_CASE("import: a bare --generate file name goes in the stack directory") {
  CHECK(GeneratedManifestPath("/src/web", "imported.yaml") == "/src/web/imported.yaml");
  CHECK(GeneratedManifestPath("/src/web/", "imported.yaml") == "/src/web/imported.yaml");
  CHECK(GeneratedManifestPath("/src/web", "./imported.yaml") == "./imported.yaml");
  CHECK(GeneratedManifestPath("/src/web", "other/imported.yaml") == "other/imported.yaml");
  CHECK(GeneratedManifestPath("/src/web", "/tmp/imported.yaml") == "/tmp/imported.yaml");
}

TEST_CASE("import: what is refused before anything is read") {
  MemEnv env;
  env.AddFile("web/main.yaml", kStack);
  const LoadResult stack = Load(env, "web");
  const StackConfig& config = stack.config;
  auto why = [&](const std::vector<ImportItem>& items, const std::string& generate = "") {
    Status st = CheckImport(items, config, generate, env);
    if (!st.ok()) CHECK(st.code() == StatusCode::kInvalidArgument);
    return st.message();
  };
  // Declared addresses: nothing to refuse.
  CHECK(why({Item("network.core", "n1"), Item("volume.data[1]", "v1")}).empty());
  CHECK(
      UndeclaredImports({Item("network.core", "n1"), Item("network.edge", "n2")}, config).size() ==
      1);
  CHECK(why({Item("network.core", "n1"), Item("network.core", "n2")}) ==
        "network.core is given twice");
  // Not in the manifests, and no --generate.
  CHECK(why({Item("network.edge", "n1"), Item("ssh_key.k", "k1")}) ==
        "network.edge (and 1 more) not in the manifests: add it first so that the next plan can "
        "compare it, or pass --generate FILE to write its manifest from the live object");
  CHECK(why({Item("network.edge", "n1")}, "web/gen.yaml").empty());
  // What --generate cannot write: in a module, with an index, over a file.
  CHECK(why({Item("module.m.network.edge", "n1")}, "web/gen.yaml") ==
        "--generate writes documents into the stack, not into a module: module.m.network.edge "
        "is in a module; declare it in the module first, or import it at an address of the "
        "stack");
  CHECK(why({Item("network.edge[0]", "n1")}, "web/gen.yaml") ==
        "--generate writes one document per resource: network.edge[0] has an index; declare "
        "the count or for_each resource first, or import it at an address without one");
  CHECK(why({Item("network.edge", "n1")}, "web/main.yaml") ==
        "web/main.yaml exists; --generate writes a new file");
  // A declared address needs no file: the one named may exist.
  CHECK(why({Item("network.core", "n1")}, "web/main.yaml").empty());
}

TEST_CASE("ReadForImport reads every object first: all or none") {
  FakeProvider api;
  const KindCatalog kinds = KindCatalogFrom(**SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR));
  const std::string net = api.Inject("network", {{"name", "n"}, {"region", "eu-central"}});
  const std::string key = api.Inject("ssh_key", {{"name", "k"}, {"public_key", "ssh-ed25519 A"}});
  StateSnapshot st;
  std::vector<ImportItem> items = {{*ResourceAddress::Parse("network.core"), net},
                                   {*ResourceAddress::Parse("module.m.ssh_key.deploy"), key}};
  ImportRead read = ReadForImport(items, st, api, kinds);
  REQUIRE(read.ok());
  REQUIRE(read.records.size() == 2);
  CHECK(read.records[1].address == "module.m.ssh_key.deploy");
  CHECK(read.records[1].kind == "ssh_key");
  CHECK(read.records[1].attributes["id"] == key);
  CHECK(read.records[0].attributes["region"] == "eu-central");

  // One object missing: nothing at all, and the reason names it.
  items.push_back({*ResourceAddress::Parse("network.gone"), "no-such-id"});
  ImportRead partial = ReadForImport(items, st, api, kinds);
  CHECK_FALSE(partial.ok());
  CHECK(partial.records.empty());
  CHECK(partial.error.find("no-such-id") != std::string::npos);

  // An address already managed is refused before any read.
  st.resources["network.core"].id = net;
  const int reads = api.reads();
  ImportRead managed = ReadForImport({items[0]}, st, api, kinds);
  CHECK_FALSE(managed.ok());
  CHECK(managed.error.find("already managed") != std::string::npos);
  CHECK(api.reads() == reads);
}

TEST_CASE("ReadForImport refuses a second address for an object, naming the first") {
  FakeProvider api;
  const KindCatalog kinds = KindCatalogFrom(**SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR));
  const std::string vol = api.Inject("volume", {{"name", "a"}, {"region", "eu-central"}});
  StateSnapshot st;
  st.resources["volume.vols[\"a\"]"].address = "volume.vols[\"a\"]";
  st.resources["volume.vols[\"a\"]"].kind = "volume";
  st.resources["volume.vols[\"a\"]"].id = vol;
  // An instance the API calls by its UUID, imported by its preview spelling.
  const std::string uuid = "01234567-89ab-cdef-0123-456789abcdef";
  st.resources["instance.web"].address = "instance.web";
  st.resources["instance.web"].kind = "instance";
  st.resources["instance.web"].id = uuid;
  const int reads = api.reads();
  // Tracked already: refused before any read, whatever the spelling of its id.
  ImportRead twice =
      ReadForImport({{*ResourceAddress::Parse("volume.vols[\"b\"]"), vol}}, st, api, kinds);
  CHECK_FALSE(twice.ok());
  CHECK(twice.error.rfind(
            "volume.vols[\"b\"]: volume " + vol + " is tracked at volume.vols[\"a\"] already", 0) ==
        0);
  const std::string alias = "inst_0123456789ABCDEF0123456789abcdef";
  ImportRead spelled =
      ReadForImport({{*ResourceAddress::Parse("instance.api"), alias}}, st, api, kinds);
  CHECK_FALSE(spelled.ok());
  CHECK(spelled.error.rfind(
            "instance.api: instance " + alias + " is tracked at instance.web already", 0) == 0);
  CHECK(api.reads() == reads);
  // Two addresses for one object in one import: the second is refused.
  ImportRead pair = ReadForImport(
      {{*ResourceAddress::Parse("volume.x"), vol}, {*ResourceAddress::Parse("volume.y"), vol}},
      StateSnapshot{}, api, kinds);
  CHECK_FALSE(pair.ok());
  CHECK(pair.error.rfind("volume.y: volume " + vol + " is tracked at volume.x already", 0) == 0);
  CHECK(pair.records.empty());
}

TEST_CASE("import --generate: the manifests written, loaded back, and their dependencies") {
  MemEnv env;
  env.AddFile("web/main.yaml", kStack);
  const LoadResult stack = Load(env, "web");
  auto registry = SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(registry.ok());
  const KindCatalog kinds = KindCatalogFrom(**registry);
  FakeProvider api;
  const std::string core =
      api.Inject("network", {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}});
  const std::string edge =
      api.Inject("network", {{"name", "edge"}, {"region", "eu-central"}, {"cidr", "10.2.0.0/16"}});
  const std::string app = api.Inject("instance", {{"name", "app"},
                                                  {"region", "eu-central"},
                                                  {"image", "debian-12"},
                                                  {"plan", "s-1vcpu-1gb"},
                                                  {"network", core}});
  const std::string web = api.Inject("instance", {{"name", "web"},
                                                  {"region", "eu-central"},
                                                  {"image", "debian-12"},
                                                  {"plan", "s-1vcpu-1gb"},
                                                  {"network", edge}});
  // The state knows the core network; the import adopts the app (declared),
  // the edge network and the web instance on it (neither declared).
  StateSnapshot st;
  st.resources["network.core"] = {.address = "network.core", .kind = "network", .id = core};
  const std::vector<ImportItem> items = {Item("instance.app", app), Item("network.edge", edge),
                                         Item("instance.web", web)};
  REQUIRE(CheckImport(items, stack.config, "web/imported.yaml", env).ok());
  ImportRead read = ReadForImport(items, st, api, kinds);
  REQUIRE(read.ok());
  const std::vector<ImportItem> undeclared = UndeclaredImports(items, stack.config);
  REQUIRE(undeclared.size() == 2);

  const std::string text = GenerateImportManifests(undeclared, read.records, st, **registry, kinds);
  INFO(text);
  CHECK(text.rfind("# Written by cairn import --generate", 0) == 0);
  CHECK(text.find("name: web") != std::string::npos);
  CHECK(text.find("name: app") == std::string::npos);           // declared already
  CHECK(text.find("${network.edge.id}") != std::string::npos);  // an id the import adopts
  CHECK(text.find(edge) == std::string::npos);

  ReloadedStack now = WriteAndReload(env, "web/imported.yaml", text, Options(env, "web"));
  REQUIRE(now.ok());
  CHECK(env.Exists("web/imported.yaml"));
  REQUIRE(now.load.config.Find(*ResourceAddress::Parse("instance.web")) != nullptr);

  // Dependencies from the manifests as they now are: the generated web
  // instance's on the generated network, the declared app's on core.
  AddDependsOn(read.records, now.load.config);
  CHECK(read.records[0].depends_on == std::vector<std::string>{"network.core"});
  CHECK(read.records[1].depends_on.empty());
  CHECK(read.records[2].depends_on == std::vector<std::string>{"network.edge"});
  // A record given its dependencies keeps them.
  read.records[1].depends_on = {"network.core"};
  AddDependsOn(read.records, stack.config);
  CHECK(read.records[1].depends_on == std::vector<std::string>{"network.core"});
}

TEST_CASE("import --generate: a file that breaks the stack is taken back") {
  MemEnv env;
  env.AddFile("web/main.yaml", kStack);
  // A document the stack declares already: the stack no longer loads.
  const std::string text =
      "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.9.0.0/16}\n";
  ReloadedStack now = WriteAndReload(env, "web/imported.yaml", text, Options(env, "web"));
  CHECK_FALSE(now.ok());
  CHECK(now.error ==
        "the generated manifests do not load (above); web/imported.yaml was removed and nothing "
        "was imported");
  CHECK_FALSE(now.load.diagnostics.empty());
  CHECK_FALSE(env.Exists("web/imported.yaml"));
  CHECK(Load(env, "web").ok());

  // A directory that is not there: nothing written, nothing loaded.
  ReloadedStack nowhere = WriteAndReload(env, "gone/imported.yaml", text, Options(env, "gone"));
  CHECK_FALSE(nowhere.ok());
  CHECK(nowhere.load.diagnostics.empty());
}

}  // namespace import_test
