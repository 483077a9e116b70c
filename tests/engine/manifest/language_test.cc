// The expression language in whole stacks: locals, conditionals in count,
// for expressions, exact dependencies through computed indexes, residuals
// kept for apply, and every new diagnostic at file:line:col of the
// sub-expression.
#include <catch2/catch.hpp>

#include "base/env.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"

namespace language_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

LoadOptions Options() {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

LoadResult Load(const std::string& yaml, LoadOptions o = Options()) {
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

std::string Diags(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + "\n";
  }
  return out;
}

const ResourceConfig& Get(const LoadResult& r, const std::string& addr) {
  const ResourceConfig* rc = r.config.Find(*ResourceAddress::Parse(addr));
  REQUIRE(rc);
  return *rc;
}

std::vector<std::string> Deps(const ResourceConfig& rc) {
  std::vector<std::string> out;
  for (const auto& d : rc.depends_on) out.push_back(d.ToString());
  return out;
}

const char* kNodes = R"(
kind: variable
name: nodes
default: {a: {disk: 10}, b: {disk: 20}}
---
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: instance
name: node
for_each: ${var.nodes}
spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12, network: "${network.net.id}"}
)";

}  // namespace

TEST_CASE("language: a local is evaluated once and read anywhere in its stack") {
  auto r = Load(R"(
kind: variable
name: env
default: prod
---
kind: local
name: prefix
value: ${var.env}-${local.region}
---
kind: local
name: region
value: eu-central
---
kind: local
name: tags
value: {team: core, env: "${var.env}"}
---
kind: network
name: main
spec: {name: "${local.prefix}-net", region: "${local.region}", cidr: 10.0.0.0/16}
---
kind: output
name: tags
value: ${local.tags}
)");
  REQUIRE(r.ok());
  CHECK(Get(r, "network.main").spec["name"] == "prod-eu-central-net");
  REQUIRE(r.config.outputs.size() == 1);
  CHECK(r.config.outputs[0].value == Value{{"team", "core"}, {"env", "prod"}});
}

TEST_CASE("language: count takes a conditional, and an index any expression") {
  auto r = Load(R"(
kind: variable
name: prod
type: bool
default: true
---
kind: network
name: tier
count: '${var.prod ? 2 : 1}'
spec: {region: eu-central, cidr: "10.${count.index}.0.0/16"}
---
kind: instance
name: web
count: 3
spec:
  region: eu-central
  plan: s-1vcpu-1gb
  image: debian-12
  network: ${network.tier[count.index % 2].id}
)");
  REQUIRE(r.ok());
  CHECK(Get(r, "network.tier[1]").spec["cidr"] == "10.1.0.0/16");
  CHECK(Get(r, "instance.web[2]").spec["network"] == "${network.tier[0].id}");
  CHECK(Get(r, "instance.web[1]").spec["network"] == "${network.tier[1].id}");
  // Exact: each instance depends on the one network it reads.
  CHECK(Deps(Get(r, "instance.web[1]")) == std::vector<std::string>{"network.tier[1]"});
  CHECK(Deps(Get(r, "instance.web[2]")) == std::vector<std::string>{"network.tier[0]"});
}

TEST_CASE("language: one volume per instance of a for_each resource, by each.key") {
  auto r = Load(std::string(kNodes) + R"(
---
kind: volume
name: data
for_each: ${var.nodes}
spec:
  region: eu-central
  size_gb: ${each.value.disk}
  instance: ${instance.node[each.key].id}
)");
  REQUIRE(r.ok());
  const ResourceConfig& b = Get(r, "volume.data[\"b\"]");
  CHECK(b.spec["size_gb"] == 20);
  CHECK(b.spec["instance"] == "${instance.node[\"b\"].id}");
  CHECK(Deps(b) == std::vector<std::string>{"instance.node[\"b\"]"});
}

TEST_CASE("language: for expressions, splats and whole resources") {
  auto r = Load(std::string(kNodes) + R"(
---
kind: output
name: ids
value: '${[for k in keys(var.nodes) : instance.node[k].id]}'
---
kind: output
name: all
value: ${instance.node[*].id}
---
kind: output
name: count
value: ${length(instance.node)}
---
kind: output
name: disks
value: '${{for k, v in var.nodes : k => v.disk * 2 if v.disk > 10}}'
)");
  INFO(Diags(r));
  REQUIRE(r.ok());
  std::map<std::string, Value> out;
  for (const auto& o : r.config.outputs) out[o.name] = o.value;
  CHECK(out["ids"] == "${[instance.node[\"a\"].id, instance.node[\"b\"].id]}");
  CHECK(out["all"] == "${[instance.node[\"a\"].id, instance.node[\"b\"].id]}");
  CHECK(out["count"] == 2);
  CHECK(out["disks"] == Value{{"b", 40}});
}

TEST_CASE("language: a residual keeps what waits for apply and folds the rest") {
  auto r = Load(R"(
kind: variable
name: env
default: prod
---
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: instance
name: web
spec:
  name: ${var.env}-web
  region: eu-central
  plan: '${var.env == "prod" ? "s-2vcpu-4gb" : "s-1vcpu-1gb"}'
  image: debian-12
  network: ${network.net.id}
---
kind: output
name: label
value: ${var.env}/${tostring(network.net.id)}/${1 + 1}
)");
  REQUIRE(r.ok());
  CHECK(Get(r, "instance.web").spec["plan"] == "s-2vcpu-4gb");
  CHECK(r.config.outputs[0].value == "prod/${tostring(network.net.id)}/2");
  AttributeLookup lookup = [](const ResourceAddress&,
                              const std::string& attr) -> std::optional<Value> {
    return attr == "id" ? Value("n-1") : Value();
  };
  CHECK(ResolveReferences(r.config.outputs[0].value, lookup) == "prod/n-1/2");
}

TEST_CASE("language: every mistake is reported at once, under the sub-expression") {
  auto r = Load(R"(kind: local
name: a
value: ${local.b}
---
kind: local
name: b
value: ${local.a}
---
kind: network
name: n
spec: {region: '${tostrin(1)}', cidr: '${1 + "x"}'}
---
kind: network
name: m
spec: {region: '${local.nope}', cidr: '${[1, 2][5]}'}
---
kind: output
name: o
value: ${1 / 0}
)");
  CHECK_FALSE(r.ok());
  std::string d = Diags(r);
  INFO(d);
  CHECK(
      d.find("main.yaml:3:8: dependency_cycle: dependency cycle: local.a -> local.b -> local.a") !=
      std::string::npos);
  CHECK(d.find("main.yaml:11:19: unknown_function: there is no function named \"tostrin\"") !=
        std::string::npos);
  CHECK(d.find("main.yaml:11:46: type_mismatch: \"+\" needs numbers, not the string \"x\"") !=
        std::string::npos);
  CHECK(d.find("main.yaml:15:19: unknown_local: reference to undeclared local \"nope\"") !=
        std::string::npos);
  CHECK(d.find("main.yaml:15:49: index_out_of_range") != std::string::npos);
  CHECK(d.find("main.yaml:19:14: division_by_zero") != std::string::npos);
}

TEST_CASE("language: count known only after apply names the reference that makes it so") {
  auto r = Load(R"(
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: local
name: n
value: ${network.net.id}
---
kind: volume
name: v
count: '${local.n == "" ? 1 : 2}'
spec: {region: eu-central, size_gb: 10}
)");
  CHECK_FALSE(r.ok());
  INFO(Diags(r));
  REQUIRE(r.diagnostics.size() >= 1);
  bool found = false;
  for (const auto& d : r.diagnostics) {
    if (d.code == "unknown_count") {
      found = true;
      CHECK(d.summary ==
            "count must be known when the stack is loaded, but it depends on network.net.id");
      CHECK(d.location.line == 12);
    }
  }
  CHECK(found);
}

TEST_CASE("language: a sensitive value stays sensitive through locals and functions") {
  auto r = Load(R"(
kind: variable
name: pw
sensitive: true
default: hunter2
---
kind: local
name: dsn
value: 'db://u:${var.pw}@host'
---
kind: output
name: dsn
value: ${tostring(local.dsn)}
)");
  CHECK_FALSE(r.ok());
  INFO(Diags(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "output_not_sensitive");
  CHECK(r.diagnostics[0].summary.find("sensitive variable \"pw\"") != std::string::npos);
}

TEST_CASE("language: YAML's error inside an unquoted ${...} says to quote it") {
  auto r = Load("kind: volume\nname: v\ncount: ${var.prod ? 2 : 1}\nspec: {region: x}\n");
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics[0].code == "yaml_syntax");
  CHECK(r.diagnostics[0].detail.find("quote the whole value with single quotes") !=
        std::string::npos);
}

TEST_CASE("language: a line indented with a tab says YAML indents with spaces") {
  auto r = Load("kind: volume\nname: v\nspec:\n\tregion: x\n");
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics[0].code == "yaml_syntax");
  CHECK(r.diagnostics[0].location.line == 4);
  CHECK(r.diagnostics[0].detail ==
        "the line is indented with a tab; YAML indents with spaces only");
  // A tab inside a value is no indentation, and no YAML error.
  auto quoted = Load("kind: volume\nname: v\nspec:\n  region: \"a\tb\"\n  size_gb: 1\n");
  REQUIRE_FALSE(quoted.diagnostics.empty());
  CHECK(quoted.diagnostics[0].code != "yaml_syntax");
}

TEST_CASE("language: locals and path inside a module are the module's own") {
  std::map<std::string, std::string> files = {{"main.yaml", R"(
kind: module
name: app
source: ./mod
inputs: {env: prod}
---
kind: output
name: label
value: ${module.app.label}
)"},
                                              {"mod/main.yaml", R"(
kind: variable
name: env
---
kind: local
name: label
value: ${var.env}-app
---
kind: output
name: label
value: ${local.label}
)"}};
  MemEnv env;
  for (const auto& [name, text] : files) env.AddFile("stack/" + name, text);
  LoadOptions o = Options();
  o.env = &env;
  o.paths = {"stack"};
  auto r = LoadStack(o);
  INFO(Diags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.outputs.size() == 1);
  CHECK(r.config.outputs[0].value == "prod-app");
}

TEST_CASE("language: enabled gives one instance without an index, or none") {
  auto r = Load(R"(
kind: variable
name: canary
type: bool
default: false
---
kind: network
name: main
enabled: true
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: network
name: canary
enabled: ${var.canary}
spec: {region: eu-central, cidr: 10.1.0.0/16}
---
kind: output
name: canary_id
value: '${network.canary == null ? "none" : network.canary.id}'
)");
  INFO(Diags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.resources.size() == 1);
  CHECK(r.config.resources[0].address.ToString() == "network.main");
  CHECK(r.config.outputs[0].value == "none");
  // The implied move from count's [0], for a resource that had count: 1.
  REQUIRE(r.config.moved.size() == 1);
  CHECK(r.config.moved[0].implicit);
  CHECK(r.config.moved[0].from.ToString() == "network.main[0]");

  auto bad = Load(R"(kind: network
name: a
enabled: yes please
count: 2
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: network
name: b
enabled: '${"x"}'
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: network
name: c
enabled: false
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: output
name: o
value: ${network.c.id}
)");
  std::string d = Diags(bad);
  INFO(d);
  CHECK(d.find("main.yaml:3:1: count_and_for_each: a resource takes enabled, count or for_each") !=
        std::string::npos);
  CHECK(d.find("main.yaml:9:10: invalid_enabled: enabled must be true or false, not a string") !=
        std::string::npos);
  CHECK(d.find("main.yaml:19:10: disabled_resource: network.c is disabled (enabled: false)") !=
        std::string::npos);
}

}  // namespace language_test
