// StackConsole: expressions typed at `cairn console` evaluated against a
// stack loaded from inline manifests and a state built here: variables,
// locals (those waiting for a resource read from the state), resources
// shaped by the manifests with the state's values, data sources and
// instances never applied unknown, sensitive values masked however they
// are reached, and errors at the sub-expression.
#include "engine/operations/console.h"

#include <catch2/catch.hpp>

#include "base/env.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace console_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

constexpr const char* kStack =
    "kind: variable\nname: region\ntype: string\ndefault: eu-central\n---\n"
    "kind: variable\nname: base\ntype: string\ndefault: 10.0.0.0/8\n---\n"
    "kind: variable\nname: sizes\ntype: map\ndefault: {small: 10, large: 100}\n---\n"
    "kind: variable\nname: pw\ntype: string\nsensitive: true\ndefault: hunter2\n---\n"
    "kind: local\nname: prefix\nvalue: app-${var.region}\n---\n"
    "kind: local\nname: net_id\nvalue: ${network.core.id}\n---\n"
    "kind: local\nname: secret_name\nvalue: db-${var.pw}\n---\n"
    "kind: data\nname: shared\ntype: network\nfilter: {name: shared}\n---\n"
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
    "kind: network\nname: named\nspec: {name: 'net-${var.pw}', region: eu-central, cidr: "
    "10.2.0.0/16}\n---\n"
    "kind: volume\nname: disk\ncount: 2\n"
    "spec: {name: 'disk-${count.index}', region: eu-central, size_gb: 10}\n---\n"
    "kind: volume\nname: tier\nfor_each: [a, b]\n"
    "spec: {name: 'tier-${each.key}', region: eu-central, size_gb: 20}\n";

LoadResult Load(const std::string& yaml = kStack) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

void Record(StateSnapshot& st, const std::string& address, const std::string& kind,
            const std::string& id, Value attributes) {
  ResourceState r;
  r.address = address;
  r.kind = kind;
  r.id = id;
  attributes["id"] = id;
  r.attributes = std::move(attributes);
  st.resources[address] = std::move(r);
}

// The stack applied but for volume.disk[1].
StateSnapshot Applied() {
  StateSnapshot st;
  st.lineage = "l";
  st.serial = 3;
  Record(st, "network.core", "network", "net-1",
         {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}});
  Record(st, "network.named", "network", "net-2",
         {{"name", "net-hunter2"}, {"region", "eu-central"}, {"cidr", "10.2.0.0/16"}});
  Record(st, "volume.disk[0]", "volume", "vol-0",
         {{"name", "disk-0"}, {"region", "eu-central"}, {"size_gb", 10}});
  Record(st, "volume.tier[\"a\"]", "volume", "vol-a",
         {{"name", "tier-a"}, {"region", "eu-central"}, {"size_gb", 20}});
  Record(st, "volume.tier[\"b\"]", "volume", "vol-b",
         {{"name", "tier-b"}, {"region", "eu-central"}, {"size_gb", 20}});
  return st;
}

struct Console {
  LoadResult loaded = Load();
  StateSnapshot state;
  MemEnv env;
  std::unique_ptr<StackConsole> console;

  explicit Console(StateSnapshot st = Applied()) : state(std::move(st)) {
    INFO(RenderDiagnostics(loaded.diagnostics, loaded.sources));
    REQUIRE(loaded.ok());
    ConsoleOptions options;
    options.env = &env;
    console = std::make_unique<StackConsole>(loaded.config, state, loaded.registry.get(), options);
  }
  // The value shown, or the first error's code and message.
  std::string Show(const std::string& text) {
    ConsoleResult r = console->Eval(text);
    if (!r.ok()) return "error " + r.diagnostics[0].code + ": " + r.diagnostics[0].summary;
    return ConsoleText(r.value);
  }
  ConsoleResult Eval(const std::string& text) { return console->Eval(text); }
};

}  // namespace

TEST_CASE("console: variables, locals, functions and path, shown as Terraform's console does") {
  Console c;
  CHECK(c.Show("var.region") == "\"eu-central\"");
  CHECK(c.Show("var.sizes") == "{large = 100, small = 10}");
  CHECK(c.Show("var.sizes[\"large\"] * 2") == "200");
  CHECK(c.Show("[for k, v in var.sizes : upper(k)]") == "[\"LARGE\", \"SMALL\"]");
  CHECK(c.Show("cidrsubnet(var.base, 8, 1)") == "\"10.1.0.0/16\"");
  CHECK(c.Show("toset([\"b\", \"a\", \"b\"])") == "toset([\"a\", \"b\"])");
  CHECK(c.Show("local.prefix") == "\"app-eu-central\"");
  CHECK(c.Show("path.root") == "\".\"");
  CHECK(c.Show("null") == "null");
  c.env.AddFile("motd.txt", "hello\n");
  CHECK(c.Show("file(\"motd.txt\")") == "\"hello\"");
  CHECK(c.Show("fileexists(\"nope.txt\")") == "false");
}

TEST_CASE("console: resources read the state, shaped by the manifests") {
  Console c;
  CHECK(c.Show("network.core.id") == "\"net-1\"");
  CHECK(c.Show("network.core.cidr") == "\"10.1.0.0/16\"");
  CHECK(c.Show("volume.disk[0].name") == "\"disk-0\"");
  CHECK(c.Show("volume.tier[\"b\"].id") == "\"vol-b\"");
  CHECK(c.Show("volume.tier[\"a\"]") ==
        "{id = \"vol-a\", name = \"tier-a\", region = \"eu-central\", size_gb = 20}");
  // count: a list; for_each: a map; an instance never applied is unknown.
  CHECK(c.Show("volume.disk[*].id") == "[\"vol-0\", (known after apply)]");
  CHECK(c.Show("length(volume.disk)") == "2");
  CHECK(c.Show("keys(volume.tier)") == "[\"a\", \"b\"]");
  CHECK(c.Show("[for k, v in volume.tier : v.size_gb]") == "[20, 20]");
  CHECK(c.Show("volume.disk[1].id") == "(known after apply)");
  CHECK(c.Show("\"${local.prefix}-${network.core.id}\"") == "\"app-eu-central-net-1\"");
  // A local waiting for a resource, evaluated from the state.
  CHECK(c.Show("local.net_id") == "\"net-1\"");
  // Data sources are never read at the console.
  CHECK(c.Show("data.network.shared.id") == "(known after apply)");
}

TEST_CASE("console: a stack never applied has every resource attribute unknown") {
  Console c{StateSnapshot()};
  CHECK(c.Show("network.core.id") == "(known after apply)");
  CHECK(c.Show("local.net_id") == "(known after apply)");
  CHECK(c.Show("length(volume.disk)") == "2");
  CHECK(c.Show("volume.disk[*].id") == "[(known after apply), (known after apply)]");
  CHECK(c.Show("var.region") == "\"eu-central\"");
  ConsoleResult r = c.Eval("network.core.id");
  REQUIRE(r.ok());
  CHECK(ConsoleJson(r.value) ==
        Value({{"value", nullptr}, {"type", nullptr}, {"sensitive", false}, {"known", false}}));
}

TEST_CASE("console: sensitive values are masked however they are reached") {
  Console c;
  CHECK(c.Show("var.pw") == "(sensitive value)");
  CHECK(c.Show("\"x-${var.pw}\"") == "(sensitive value)");
  CHECK(c.Show("upper(var.pw)") == "(sensitive value)");
  CHECK(c.Show("local.secret_name") == "(sensitive value)");
  CHECK(c.Show("[var.region, var.pw]") == "[\"eu-central\", (sensitive value)]");
  // The state keeps no marks: a string holding a sensitive variable's
  // value is masked, as plans mask it.
  CHECK(c.Show("network.named.name") == "(sensitive value)");
  CHECK(c.Show("network.named.cidr") == "\"10.2.0.0/16\"");
  CHECK(c.Show("network.named").find("name = (sensitive value)") != std::string::npos);
  CHECK(c.Show("nonsensitive(var.pw)") == "\"hunter2\"");
  CHECK(c.Show("length(var.pw)") == "(sensitive value)");

  ConsoleResult r = c.Eval("var.pw");
  REQUIRE(r.ok());
  CHECK(ConsoleJson(r.value) ==
        Value({{"value", nullptr}, {"type", "string"}, {"sensitive", true}, {"known", true}}));
  r = c.Eval("[var.region, var.pw]");
  REQUIRE(r.ok());
  CHECK(ConsoleJson(r.value) == Value({{"value", {"eu-central", nullptr}},
                                       {"type", "list"},
                                       {"sensitive", true},
                                       {"known", true}}));
  r = c.Eval("var.sizes");
  REQUIRE(r.ok());
  CHECK(ConsoleJson(r.value) == Value({{"value", {{"large", 100}, {"small", 10}}},
                                       {"type", "map"},
                                       {"sensitive", false},
                                       {"known", true}}));
}

TEST_CASE("console: errors are diagnostics at the sub-expression, with did you mean") {
  Console c;
  ConsoleResult r = c.Eval("upper(var.regoin)");
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == "unknown_variable");
  CHECK(d.detail == "did you mean \"region\"?");
  CHECK(d.location.file == "<console>");
  CHECK(d.location.line == 1);
  CHECK(d.location.column == 7);
  CHECK(d.location.length == 10);
  SourceFiles sources;
  sources.Add(kConsoleFile, "upper(var.regoin)");
  CHECK(RenderDiagnostic(d, sources) ==
        "<console>:1:7: error: reference to undeclared variable \"regoin\" [unknown_variable]\n"
        "    upper(var.regoin)\n"
        "          ^~~~~~~~~~\n"
        "  did you mean \"region\"?\n");

  CHECK(c.Show("1 +").rfind("error invalid_expression:", 0) == 0);
  CHECK(c.Eval("(1 + ").diagnostics[0].location.column >= 5);
  CHECK(c.Show("local.prefx") == "error unknown_local: reference to undeclared local \"prefx\"");
  CHECK(c.Show("network.cor.id") ==
        "error unknown_reference: no resource network.cor is declared in the manifests");
  CHECK(c.Eval("network.cor.id").diagnostics[0].detail == "did you mean \"core\"?");
  CHECK(c.Show("netwrk.core.id").rfind("error unknown_reference: \"netwrk\" is not", 0) == 0);
  CHECK(c.Show("network.core.cdir") ==
        "error unknown_attribute: a network has no attribute \"cdir\"");
  CHECK(c.Show("volume.disk[2].id") ==
        "error invalid_index: volume.disk[2] does not exist: count is 2");
  CHECK(c.Show("volume.disk.id").rfind("error invalid_index: volume.disk has count", 0) == 0);
  CHECK(c.Show("volume.tier[\"c\"]") ==
        "error invalid_index: volume.tier has no instance with the key \"c\"");
  CHECK(c.Show("network.core[0]").rfind("error invalid_index:", 0) == 0);
  CHECK(c.Show("data.network.other.id").rfind("error unknown_reference:", 0) == 0);
  CHECK(c.Show("count.index").rfind("error count_outside_count:", 0) == 0);
  CHECK(c.Show("1 / 0").rfind("error division_by_zero:", 0) == 0);
  CHECK(c.Show("file(\"missing.txt\")").rfind("error file_not_found:", 0) == 0);

  // Every error of the expression, not only the first.
  r = c.Eval("[var.nope, local.nope]");
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].location.column == 2);
  CHECK(r.diagnostics[1].location.column == 12);
}

TEST_CASE("console: private key material is never shown") {
  Console c;
  c.env.AddFile("key.pem",
                "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n");
  CHECK(c.Show("file(\"key.pem\")").rfind("error private_key_material:", 0) == 0);
  // Assembled from pieces: refused on the result.
  CHECK(c.Show("\"-----BEGIN ${\"RSA\"} PRIVATE KEY-----\"")
            .rfind("error private_key_material:", 0) == 0);
}

TEST_CASE("console: module outputs read as the module computes them and empty counts are empty") {
  cairn::testing::TempDir dir;
  cairn::testing::WriteFile(
      dir.path() + "/main.yaml",
      "kind: variable\nname: n\ntype: number\ndefault: 0\n---\n"
      "kind: network\nname: net\ncount: ${var.n}\n"
      "spec: {name: 'net-${count.index}', region: eu-central, cidr: 10.0.0.0/16}\n---\n"
      "kind: volume\nname: none\nfor_each: []\n"
      "spec: {name: 'v-${each.key}', region: eu-central, size_gb: 1}\n---\n"
      "kind: module\nname: app\nsource: ./app\n---\n"
      "kind: module\nname: tier\nsource: ./app\nfor_each: [a, b]\ninputs: {suffix: "
      "'${each.key}'}\n");
  cairn::testing::WriteFile(
      dir.path() + "/app/app.yaml",
      "kind: variable\nname: suffix\ntype: string\ndefault: x\n---\n"
      "kind: variable\nname: pw\ntype: string\nsensitive: true\ndefault: hunter2\n---\n"
      "kind: network\nname: inner\n"
      "spec: {name: 'inner-${var.suffix}', region: eu-central, cidr: 10.1.0.0/16}\n---\n"
      "kind: output\nname: label\nvalue: app-${upper(var.suffix)}\n---\n"
      "kind: output\nname: net_id\nvalue: ${network.inner.id}\n---\n"
      "kind: output\nname: secret\nvalue: ${var.pw}\nsensitive: true\n");
  LoadOptions o;
  o.paths = {dir.path()};
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  LoadResult loaded = LoadStack(o);
  INFO(RenderDiagnostics(loaded.diagnostics, loaded.sources));
  REQUIRE(loaded.ok());
  StateSnapshot st;
  Record(st, "module.app.network.inner", "network", "net-in",
         {{"name", "inner-x"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}});
  StackConsole console(loaded.config, st, loaded.registry.get(), {});
  auto show = [&](const std::string& text) {
    ConsoleResult r = console.Eval(text);
    if (!r.ok()) return "error " + r.diagnostics[0].code + ": " + r.diagnostics[0].summary;
    return ConsoleText(r.value);
  };
  CHECK(show("module.app.label") == "\"app-X\"");
  CHECK(show("module.tier[\"b\"].label") == "\"app-B\"");
  // A module's resource, read from the state; one never applied is unknown.
  CHECK(show("module.app.net_id") == "\"net-in\"");
  CHECK(show("module.tier[\"a\"].net_id") == "(known after apply)");
  CHECK(show("module.app.secret") == "(sensitive value)");
  CHECK(show("module.app.nope") ==
        "error unknown_output: no output module.app.nope in the stack's modules");
  CHECK(show("module.tier[\"c\"].label") ==
        "error unknown_output: no output module.tier[\"c\"].label in the stack's modules");
  // count 0 and an empty for_each: declared, with no instance.
  CHECK(show("length(network.net)") == "0");
  CHECK(show("network.net") == "[]");
  CHECK(show("volume.none") == "{}");
  CHECK(show("network.nett")
            .rfind("error unknown_reference: no resource network.nett is "
                   "declared in the manifests",
                   0) == 0);
}

}  // namespace console_test
