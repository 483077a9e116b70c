// Modules (`kind: module`): stacks on disk whose module directories are
// loaded once per instance, with their addresses, inputs, outputs and the
// graph edges that flow through them. The error cases are in the invalid
// catalog (invalid/module_*).
#include <algorithm>
#include <catch2/catch.hpp>

#include "base/env.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace modules_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

// Loads the stack at `path`: from `env` (files and environment variables)
// when given, else from the disk with no environment variable set.
LoadOptions Options(const std::string& path, const Env* env = nullptr) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.paths = {path};
  o.env = env;
  if (!env) o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

LoadResult LoadDir(const std::string& dir) { return LoadStack(Options(dir)); }

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.code + ":" + d.summary + "\n";
  return out;
}

std::vector<std::string> Addresses(const StackConfig& c) {
  std::vector<std::string> out;
  for (const auto& r : c.resources) out.push_back(r.address.ToString());
  std::sort(out.begin(), out.end());
  return out;
}

const ResourceConfig& Get(const StackConfig& c, const std::string& address) {
  auto addr = ResourceAddress::Parse(address);
  REQUIRE(addr);
  const ResourceConfig* r = c.Find(*addr);
  INFO(address);
  REQUIRE(r);
  return *r;
}

std::vector<std::string> Deps(const StackConfig& c, const std::string& address) {
  std::vector<std::string> out;
  for (const auto& d : Get(c, address).depends_on) out.push_back(d.ToString());
  return out;
}

// A module with a network and `size` instances on it, and two outputs.
void WriteTier(const std::string& dir) {
  WriteFile(dir + "/vars.yaml",
            "kind: variable\nname: env\ntype: string\n---\n"
            "kind: variable\nname: cidr\ntype: string\n---\n"
            "kind: variable\nname: size\ntype: number\ndefault: 1\n---\n"
            "kind: variable\nname: key\ntype: string\n");
  WriteFile(dir + "/main.yaml",
            "kind: network\nname: main\nspec: {region: eu-central, cidr: \"${var.cidr}\"}\n---\n"
            "kind: instance\nname: app\ncount: ${var.size}\n"
            "spec:\n  name: ${var.env}-${count.index}\n  region: eu-central\n"
            "  plan: s-1vcpu-1gb\n  image: debian-12\n  network: ${network.main.id}\n"
            "  ssh_keys: [\"${var.key}\"]\n---\n"
            "kind: output\nname: network_id\nvalue: ${network.main.id}\n---\n"
            "kind: output\nname: ips\nvalue: ${instance.app[*].ipv4}\n");
}

const char* kKeyDoc =
    "kind: ssh_key\nname: deploy\nspec: {public_key: \"ssh-ed25519 "
    "AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g t@cairn\"}\n";

}  // namespace

TEST_CASE("a module used twice: addresses nest, inputs differ, names default per instance") {
  TempDir tmp;
  WriteTier(tmp.path() + "/modules/tier");
  WriteFile(tmp.path() + "/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: module\nname: staging\nsource: modules/tier\n"
                "inputs: {env: stg, cidr: 10.1.0.0/16, key: \"${ssh_key.deploy.id}\"}\n---\n"
                "kind: module\nname: prod\nsource: ./modules/tier/\n"
                "inputs: {env: prd, cidr: 10.2.0.0/16, size: 2, key: \"${ssh_key.deploy.id}\"}\n");
  auto r = LoadDir(tmp.path());
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) ==
        std::vector<std::string>{"module.prod.instance.app[0]", "module.prod.instance.app[1]",
                                 "module.prod.network.main", "module.staging.instance.app[0]",
                                 "module.staging.network.main", "ssh_key.deploy"});
  // Each instance takes its own inputs; the module's references get its path.
  CHECK(Get(r.config, "module.staging.network.main").spec["cidr"] == "10.1.0.0/16");
  CHECK(Get(r.config, "module.prod.network.main").spec["cidr"] == "10.2.0.0/16");
  CHECK(Get(r.config, "module.prod.network.main").spec["name"] == "prod-main");
  const auto& app1 = Get(r.config, "module.prod.instance.app[1]");
  CHECK(app1.spec["name"] == "prd-1");
  CHECK(app1.spec["network"] == "${resource[\"module.prod.network.main\"].id}");
  // The input's reference stays the stack's, and is an edge of the graph.
  CHECK(app1.spec["ssh_keys"] == Value::array({"${ssh_key.deploy.id}"}));
  CHECK(Deps(r.config, "module.prod.instance.app[1]") ==
        std::vector<std::string>{"ssh_key.deploy", "module.prod.network.main"});
  // Dependencies first in the order.
  std::vector<std::string> order;
  for (const auto& rc : r.config.resources) order.push_back(rc.address.ToString());
  auto pos = [&](const std::string& a) { return std::find(order.begin(), order.end(), a); };
  CHECK(pos("ssh_key.deploy") < pos("module.staging.instance.app[0]"));
  CHECK(pos("module.staging.network.main") < pos("module.staging.instance.app[0]"));
}

TEST_CASE("module outputs: in specs, stack outputs and other modules' inputs, [*] expanded") {
  TempDir tmp;
  WriteTier(tmp.path() + "/modules/tier");
  // A second module that takes a network id and puts a volume... on an
  // instance of the first: an input fed by another module's output.
  WriteFile(tmp.path() + "/modules/disk/main.yaml",
            "kind: variable\nname: instance\ntype: string\n---\n"
            "kind: volume\nname: data\nspec: {region: eu-central, size_gb: 10, instance: "
            "\"${var.instance}\"}\n---\n"
            "kind: output\nname: label\nvalue: disk-of-${var.instance}\n");
  WriteFile(tmp.path() + "/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: module\nname: web\nsource: modules/tier\n"
                "inputs: {env: web, cidr: 10.1.0.0/16, size: 3, key: \"${ssh_key.deploy.id}\"}\n"
                "---\nkind: module\nname: disk\nsource: modules/disk\n"
                "inputs: {instance: \"${module.web.first}\"}\n---\n"
                "kind: firewall\nname: edge\nspec:\n  rules: [{direction: inbound, protocol: tcp, "
                "port: \"22\", source: 0.0.0.0/0, action: allow}]\n"
                "  instances: \"${module.web.ids}\"\n---\n"
                "kind: output\nname: ips\nvalue: ${module.web.ips}\n---\n"
                "kind: output\nname: label\nvalue: \"[${module.disk.label}]\"\n");
  WriteFile(tmp.path() + "/modules/tier/more.yaml",
            "kind: output\nname: first\nvalue: ${instance.app[0].id}\n---\n"
            "kind: output\nname: ids\nvalue: ${instance.app[*].id}\n");
  auto r = LoadDir(tmp.path());
  INFO(Codes(r));
  REQUIRE(r.ok());
  // Another module's output as an input: the volume depends on that instance.
  const auto& vol = Get(r.config, "module.disk.volume.data");
  CHECK(vol.spec["instance"] == "${resource[\"module.web.instance.app\"][0].id}");
  CHECK(Deps(r.config, "module.disk.volume.data") ==
        std::vector<std::string>{"module.web.instance.app[0]"});
  // A list output in a spec: expanded per instance, an edge to each.
  const auto& fw = Get(r.config, "firewall.edge");
  CHECK(fw.spec["instances"] ==
        "${[resource[\"module.web.instance.app\"][0].id, "
        "resource[\"module.web.instance.app\"][1].id, "
        "resource[\"module.web.instance.app\"][2].id]}");
  CHECK(Deps(r.config, "firewall.edge").size() == 3);
  // Stack outputs see through modules; interpolation keeps the reference.
  REQUIRE(r.config.outputs.size() == 2);  // the modules' outputs are not the stack's
  for (const auto& out : r.config.outputs) {
    if (out.name == "ips") {
      CHECK(out.value ==
            "${[resource[\"module.web.instance.app\"][0].ipv4, "
            "resource[\"module.web.instance.app\"][1].ipv4, "
            "resource[\"module.web.instance.app\"][2].ipv4]}");
    } else {
      CHECK(out.value == "[disk-of-${resource[\"module.web.instance.app\"][0].id}]");
    }
  }
  // At plan time the references resolve like any other.
  Value resolved = ResolveReferences(vol.spec, [](const ResourceAddress& a, const std::string&) {
    return std::optional<Value>(a.ToString() == "module.web.instance.app[0]" ? "i-0" : "?");
  });
  CHECK(resolved["instance"] == "i-0");
}

TEST_CASE("count, for_each and nesting: module instances by index and key") {
  TempDir tmp;
  WriteFile(tmp.path() + "/modules/inner/main.yaml",
            "kind: variable\nname: cidr\n---\n"
            "kind: network\nname: net\nspec: {region: eu-central, cidr: \"${var.cidr}\"}\n---\n"
            "kind: output\nname: id\nvalue: ${network.net.id}\n");
  WriteFile(tmp.path() + "/modules/outer/main.yaml",
            "kind: variable\nname: base\ntype: number\n---\n"
            "kind: module\nname: inner\nsource: ../inner\nfor_each: {a: 1, b: 2}\n"
            "inputs: {cidr: \"10.${var.base}.${each.value}.0/24\"}\n---\n"
            "kind: output\nname: b_id\nvalue: ${module.inner[\"b\"].id}\n");
  WriteFile(tmp.path() + "/main.yaml",
            "kind: module\nname: outer\nsource: modules/outer\ncount: 2\n"
            "inputs: {base: \"${count.index}\"}\n---\n"
            "kind: output\nname: id\nvalue: ${module.outer[1].b_id}\n");
  auto r = LoadDir(tmp.path());
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) ==
        std::vector<std::string>{"module.outer[0].module.inner[\"a\"].network.net",
                                 "module.outer[0].module.inner[\"b\"].network.net",
                                 "module.outer[1].module.inner[\"a\"].network.net",
                                 "module.outer[1].module.inner[\"b\"].network.net"});
  const auto& net = Get(r.config, "module.outer[1].module.inner[\"a\"].network.net");
  CHECK(net.spec["cidr"] == "10.1.1.0/24");
  CHECK(net.spec["name"] == "outer-1-inner-a-net");
  REQUIRE(r.config.outputs.size() == 1);
  CHECK(r.config.outputs[0].value ==
        "${resource[\"module.outer[1].module.inner[\\\"b\\\"].network.net\"].id}");
}

TEST_CASE("a module's problems are reported in its own files, once, with the stack's") {
  TempDir tmp;
  WriteFile(tmp.path() + "/modules/m/main.yaml",
            "kind: network\nname: net\nspec: {region: mars, cidr: 10.0.0.0/16}\n");
  WriteFile(tmp.path() + "/main.yaml",
            "kind: module\nname: one\nsource: modules/m\n---\n"
            "kind: module\nname: two\nsource: modules/m\n---\n"
            "kind: network\nname: own\nspec: {region: eu-central, cidr: nope}\n");
  auto r = LoadDir(tmp.path());
  REQUIRE_FALSE(r.ok());
  std::vector<std::string> where;
  for (const auto& d : r.diagnostics)
    where.push_back(d.location.file.substr(tmp.path().size() + 1) + ":" +
                    std::to_string(d.location.line) + ":" + d.code);
  // The module's bad region once (both instances point at the same line).
  CHECK(where == std::vector<std::string>{"main.yaml:11:invalid_format",
                                          "modules/m/main.yaml:3:invalid_value"});
}

TEST_CASE("moved: into and out of a module") {
  TempDir tmp;
  WriteFile(tmp.path() + "/modules/m/main.yaml",
            "kind: network\nname: net\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n");
  WriteFile(tmp.path() + "/main.yaml",
            "kind: module\nname: m\nsource: modules/m\ncount: 1\n---\n"
            "kind: network\nname: out\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
            "kind: moved\nfrom: network.net\nto: module.m[0].network.net\n---\n"
            "kind: moved\nfrom: module.old.network.out\nto: network.out\n---\n"
            "kind: moved\nfrom: network.x\nto: module.m[1].network.net\n");
  auto r = LoadDir(tmp.path());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "moved_to_undeclared");
  CHECK(r.diagnostics[0].summary.find("module.m[1].network.net") != std::string::npos);
  REQUIRE(r.config.moved.size() == 2);
  CHECK(r.config.moved[0].to.ToString() == "module.m[0].network.net");
  CHECK(r.config.moved[1].from.ToString() == "module.old.network.out");
}

TEST_CASE("examples/modules is valid: one module twice, a data source and a move") {
  auto r = LoadDir(std::string(CAIRN_SOURCE_DIR) + "/examples/modules");
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(r.config.resources.size() == 7);
  CHECK(r.config.data.size() == 1);
  REQUIRE(r.config.moved.size() == 1);
  CHECK(r.config.moved[0].to.ToString() == "module.prod.network.main");
  REQUIRE(r.config.removed.size() == 1);
  CHECK(r.config.removed[0].FromText() == "instance.jump");
  CHECK_FALSE(r.config.removed[0].destroy);
  CHECK(Get(r.config, "module.staging.network.main").spec["cidr"] !=
        Get(r.config, "module.prod.network.main").spec["cidr"]);
}

TEST_CASE("with --recursive, a module directory below the stack is left to its module") {
  TempDir tmp;
  WriteTier(tmp.path() + "/stack/modules/tier");
  WriteFile(tmp.path() + "/stack/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: module\nname: one\nsource: modules/tier\n"
                "inputs: {env: a, cidr: 10.1.0.0/16, key: \"${ssh_key.deploy.id}\"}\n");
  WriteFile(tmp.path() + "/stack/more/extra.yaml",
            "kind: network\nname: extra\nspec: {region: eu-central, cidr: 10.5.0.0/16}\n");
  LoadOptions o = Options(tmp.path() + "/stack");
  o.recursive = true;
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) == std::vector<std::string>{"module.one.instance.app[0]",
                                                        "module.one.network.main", "network.extra",
                                                        "ssh_key.deploy"});
  // Each file read once: the stack's two, the module's two.
  CHECK(r.config.files.size() == 4);
}

TEST_CASE("modules load from files in memory: a MemEnv is all the loader reads") {
  MemEnv env;
  env.SetEnv("CAIRN_VAR_block", "10.7.0.0/16");
  env.AddFile("stack/main.yaml",
              "kind: variable\nname: block\n---\n"
              "kind: module\nname: m\nsource: lib/net\ninputs: {cidr: \"${var.block}\"}\n---\n"
              "kind: output\nname: id\nvalue: ${module.m.id}\n");
  env.AddFile("stack/lib/net/net.yaml",
              "kind: variable\nname: cidr\n---\n"
              "kind: network\nname: n\nspec: {region: eu-central, cidr: \"${var.cidr}\"}\n---\n"
              "kind: output\nname: id\nvalue: ${network.n.id}\n");
  LoadOptions o = Options("stack", &env);  // CAIRN_VAR_block comes from the env too
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Get(r.config, "module.m.network.n").spec["cidr"] == "10.7.0.0/16");
  REQUIRE(r.config.outputs.size() == 1);
  CHECK(r.config.outputs[0].value == "${resource[\"module.m.network.n\"].id}");
  // A module source that is not there, in memory either: the usual error.
  env.AddFile("stack/more.yaml", "kind: module\nname: x\nsource: nowhere\n");
  auto missing = LoadStack(o);
  REQUIRE(missing.diagnostics.size() == 1);
  CHECK(missing.diagnostics[0].code == "module_not_found");
  CHECK(missing.diagnostics[0].location.file == "stack/more.yaml");
}

TEST_CASE("a module with no instances still has its files checked, and declares nothing") {
  MemEnv env;
  env.AddFile("stack/main.yaml",
              "kind: module\nname: off\nsource: lib/m\ncount: 0\n---\n"
              "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n");
  env.AddFile("stack/lib/m/m.yaml",
              "kind: network\nname: inner\nspec: {region: eu-central, cidr: 10.2.0.0/16}\n");
  LoadOptions o = Options("stack", &env);
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) == std::vector<std::string>{"network.n"});
  // Broken files in it are reported all the same.
  env.AddFile("stack/lib/m/bad.yaml", "kind: netwrok\nname: x\n---\nkind: provider\n");
  auto bad = LoadStack(o);
  std::string codes;
  for (const auto& d : bad.diagnostics) codes += d.code + " ";
  CHECK(codes == "unknown_kind not_in_module ");
}

TEST_CASE("depends_on a module: every resource inside it, of every instance or of one") {
  TempDir tmp;
  WriteTier(tmp.path() + "/modules/tier");
  WriteFile(tmp.path() + "/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: module\nname: prod\nsource: modules/tier\ncount: 2\n"
                "inputs: {env: prd, cidr: 10.2.0.0/16, key: \"${ssh_key.deploy.id}\"}\n---\n"
                "kind: module\nname: none\nsource: modules/tier\ncount: 0\n"
                "inputs: {env: x, cidr: 10.3.0.0/16, key: \"${ssh_key.deploy.id}\"}\n---\n"
                "kind: network\nname: after\nspec: {region: eu-central, cidr: 10.9.0.0/16}\n"
                "depends_on: [module.prod]\n---\n"
                "kind: network\nname: after_one\nspec: {region: eu-central, cidr: 10.8.0.0/16}\n"
                "depends_on: [\"module.prod[1]\", module.none]\n");
  auto r = LoadDir(tmp.path());
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(Deps(r.config, "network.after") ==
        std::vector<std::string>{"module.prod[0].instance.app[0]", "module.prod[0].network.main",
                                 "module.prod[1].instance.app[0]", "module.prod[1].network.main"});
  CHECK(Deps(r.config, "network.after_one") ==
        std::vector<std::string>{"module.prod[1].instance.app[0]", "module.prod[1].network.main"});

  // A module no document declares is an error where it is written.
  WriteFile(tmp.path() + "/main.yaml",
            "kind: network\nname: after\nspec: {region: eu-central, cidr: 10.9.0.0/16}\n"
            "depends_on: [module.nope]\n");
  auto bad = LoadDir(tmp.path());
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "unknown_depends_on");
  CHECK(bad.diagnostics[0].summary == "depends_on names undeclared module module.nope");
  CHECK(bad.diagnostics[0].location.line == 4);
  CHECK(bad.diagnostics[0].location.column == 14);
}

TEST_CASE("depends_on on a module document: everything inside it waits, nested modules too") {
  TempDir tmp;
  WriteTier(tmp.path() + "/modules/tier");
  WriteFile(tmp.path() + "/modules/outer/main.yaml",
            "kind: variable\nname: key\ntype: string\n---\n"
            "kind: network\nname: edge\nspec: {region: eu-central, cidr: 10.7.0.0/16}\n---\n"
            "kind: module\nname: inner\nsource: ../tier\n"
            "inputs: {env: in, cidr: 10.6.0.0/16, key: \"${var.key}\"}\n");
  WriteFile(tmp.path() + "/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: firewall\nname: gate\nspec:\n  name: gate\n  rules: []\n---\n"
                "kind: module\nname: app\nsource: modules/outer\ncount: 2\n"
                "inputs: {key: \"${ssh_key.deploy.id}\"}\ndepends_on: [firewall.gate]\n---\n"
                "kind: module\nname: late\nsource: modules/tier\n"
                "inputs: {env: l, cidr: 10.5.0.0/16, key: \"${ssh_key.deploy.id}\"}\n"
                "depends_on: [\"module.app[1]\"]\n");
  auto r = LoadDir(tmp.path());
  INFO(Codes(r));
  REQUIRE(r.ok());
  // Every resource of both instances, the nested module's included.
  for (const std::string inside :
       {"module.app[0].network.edge", "module.app[1].network.edge",
        "module.app[0].module.inner.network.main", "module.app[1].module.inner.instance.app[0]"}) {
    INFO(inside);
    auto deps = Deps(r.config, inside);
    CHECK(std::find(deps.begin(), deps.end(), "firewall.gate") != deps.end());
  }
  // A module naming another module's instance: everything in that one.
  auto late = Deps(r.config, "module.late.network.main");
  std::sort(late.begin(), late.end());
  CHECK(late == std::vector<std::string>{"module.app[1].module.inner.instance.app[0]",
                                         "module.app[1].module.inner.network.main",
                                         "module.app[1].network.edge"});
  // What is outside the module does not wait.
  CHECK(Deps(r.config, "firewall.gate").empty());

  // Misuse is reported where it is written, once.
  WriteFile(tmp.path() + "/main.yaml",
            std::string(kKeyDoc) +
                "---\nkind: module\nname: app\nsource: modules/outer\ncount: 2\n"
                "inputs: {key: \"${ssh_key.deploy.id}\"}\ndepends_on: [firewall.nope]\n");
  auto bad = LoadDir(tmp.path());
  INFO(Codes(bad));
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "unknown_depends_on");
  CHECK(bad.diagnostics[0].summary == "depends_on names undeclared resource firewall.nope");
}

}  // namespace modules_test
