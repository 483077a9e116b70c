// Ephemeral variables through the loader: `ephemeral: true` makes a value
// that may go only where nothing keeps it (a write-only field, the
// provider, a local, a module's input, a condition), refused anywhere else
// at the exact place it is written; and write-only fields of the schemas.
#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace ephemeral_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

LoadResult Load(const std::map<std::string, std::string>& files,
                const std::map<std::string, std::string>& vars = {{"pw", "hunter2-xyzzy"}}) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  o.vars = vars;
  return LoadStackFromText(files, o);
}

LoadResult Load(const std::string& yaml) { return Load({{"main.yaml", yaml}}); }

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + "\n";
  }
  return out;
}

const char* kEphemeral = "kind: variable\nname: pw\ntype: string\nephemeral: true\n---\n";
const char* kNetwork =
    "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n---\n";

std::string Instance(const std::string& extra) {
  return "kind: instance\nname: web\nspec:\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
         "  image: debian-12\n" +
         extra;
}

}  // namespace

TEST_CASE("the instance schema declares user_data write-only") {
  auto reg = SchemaRegistry::Embedded();
  REQUIRE(reg.ok());
  CHECK((*reg)->WriteOnly("instance") == std::vector<std::string>{"user_data"});
  CHECK((*reg)->WriteOnly("network").empty());
}

TEST_CASE("a schema whose write-only field has a response path is refused") {
  const std::string base = R"({"type": "object", "properties": {"a": {"type": "string"}},
    "x-cairn": {"kind": "k", "computed": {}, "immutable": [], "references": {},
                "write_only": ["a"], "wire": {"fields": {"a": )";
  auto bad = SchemaRegistry::FromDocuments(
      {{"k.schema.json", base + R"({"request": "a", "response": "a"}}}}})"}}, "test");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("has a response path") != std::string::npos);
  auto unknown = SchemaRegistry::FromDocuments(
      {{"k.schema.json",
        R"({"type": "object", "properties": {}, "x-cairn": {"kind": "k", "computed": {},
          "immutable": [], "references": {}, "write_only": ["zz"], "wire": {}}})"}},
      "test");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("unknown field \"zz\"") != std::string::npos);
  auto good =
      SchemaRegistry::FromDocuments({{"k.schema.json", base + R"({"request": "a"}}}}})"}}, "test");
  CHECK(good.ok());
}

TEST_CASE("an ephemeral variable may be used in a write-only field") {
  auto r = Load(std::string(kEphemeral) + kNetwork +
                Instance("  network: ${network.n.id}\n  user_data: \"#!/bin/sh\\necho ${var.pw} "
                         "${network.n.id}\"\n"));
  INFO(Codes(r));
  CHECK(r.diagnostics.empty());
  REQUIRE(r.config.resources.size() == 2);
  CHECK(r.config.ephemeral_variables == std::vector<std::string>{"pw"});
  // Ephemeral implies sensitive: every report masks it.
  CHECK(std::find(r.config.sensitive_variables.begin(), r.config.sensitive_variables.end(), "pw") !=
        r.config.sensitive_variables.end());
}

TEST_CASE("an ephemeral variable is refused in a field the state keeps") {
  auto r = Load(std::string(kEphemeral) + Instance("  name: \"web-${var.pw}\"\n"));
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == "ephemeral_not_allowed");
  CHECK(d.summary ==
        "ephemeral variable \"pw\" cannot be used in field \"name\" of instance \"web\": the "
        "state and plans keep its value");
  CHECK(d.location.file == "main.yaml");
  CHECK(d.location.line == 12);
  CHECK(d.location.column == 10);  // the string's text, inside its quotes
  CHECK(d.detail.find("write-only field") != std::string::npos);
}

TEST_CASE("nonsensitive does not make an ephemeral value storable") {
  auto r = Load(std::string(kEphemeral) + Instance("  name: \"${nonsensitive(var.pw)}\"\n"));
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "ephemeral_not_allowed");
}

TEST_CASE("an ephemeral variable is refused in outputs counts and data sources") {
  auto r = Load(std::string(kEphemeral) +
                "kind: output\nname: o\nsensitive: true\nvalue: ${var.pw}\n---\n"
                "kind: network\nname: many\ncount: ${length(var.pw)}\n"
                "spec: {region: eu-central, cidr: 10.0.0.0/16}\n");
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 2);
  for (const Diagnostic& d : r.diagnostics) CHECK(d.code == "ephemeral_not_allowed");
  CHECK(r.diagnostics[0].summary.find("output \"o\"") != std::string::npos);
  CHECK(r.diagnostics[0].location.line == 9);
  CHECK(r.diagnostics[1].summary.find("the count of network \"many\"") != std::string::npos);
  CHECK(r.diagnostics[1].location.line == 13);
}

TEST_CASE("a local built from an ephemeral variable is ephemeral") {
  SECTION("in a write-only field: allowed") {
    auto r = Load(std::string(kEphemeral) +
                  "kind: local\nname: script\nvalue: \"echo ${var.pw}\"\n---\n" +
                  Instance("  user_data: ${local.script}\n"));
    INFO(Codes(r));
    CHECK(r.diagnostics.empty());
  }
  SECTION("in a field the state keeps: refused") {
    auto r = Load(std::string(kEphemeral) +
                  "kind: local\nname: script\nvalue: \"echo ${upper(var.pw)}\"\n---\n" +
                  Instance("  name: ${local.script}\n"));
    INFO(Codes(r));
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].code == "ephemeral_not_allowed");
    CHECK(r.diagnostics[0].location.line == 16);
  }
  SECTION("waiting for a resource: refused where it is written") {
    auto r = Load(std::string(kEphemeral) + kNetwork +
                  "kind: local\nname: both\nvalue: \"${var.pw}-${network.n.id}\"\n");
    INFO(Codes(r));
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].code == "ephemeral_not_allowed");
    CHECK(r.diagnostics[0].summary.find("waits for a resource") != std::string::npos);
    CHECK(r.diagnostics[0].location.line == 12);
  }
}

TEST_CASE("a condition may read an ephemeral variable") {
  auto r = Load(std::string(kEphemeral) +
                Instance("lifecycle:\n  precondition:\n    - condition: ${length(var.pw) >= 8}\n"
                         "      error_message: the password is too short\n"));
  INFO(Codes(r));
  CHECK(r.diagnostics.empty());
  REQUIRE(r.config.resources.size() == 1);
  // Decided at load: what waits for apply holds the verdict, not the value.
  const auto& pre = r.config.resources[0].lifecycle.preconditions;
  REQUIRE(pre.size() == 1);
  CHECK(pre[0].condition == true);
}

TEST_CASE("a module input built from an ephemeral value makes the module's variable ephemeral") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            std::string(kEphemeral) +
                "kind: module\nname: app\nsource: ./app\ninputs: {secret: \"${var.pw}\"}\n");
  WriteFile(dir.path() + "/app/main.yaml",
            "kind: variable\nname: secret\ntype: string\n---\n" +
                Instance("  user_data: \"${var.secret}\"\n  name: \"${var.secret}\"\n"));
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  o.vars = {{"pw", "hunter2-xyzzy"}};
  o.paths = {dir.path()};
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "ephemeral_not_allowed");
  CHECK(r.diagnostics[0].location.file.ends_with("app/main.yaml"));
  CHECK(r.diagnostics[0].location.line == 12);  // name:, not user_data: (line 11)
}

TEST_CASE("the provider may take an ephemeral value and the backend may not") {
  auto r = Load({{"main.yaml",
                  "kind: variable\nname: ep\ntype: string\nephemeral: true\n---\n"
                  "kind: provider\nendpoint: ${var.ep}\n---\n"
                  "kind: backend\ntype: sqlite\npath: \"${var.ep}.db\"\n"}},
                {{"ep", "http://127.0.0.1:9"}});
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "ephemeral_not_allowed");
  CHECK(r.diagnostics[0].location.line == 11);  // the backend's path
  CHECK(r.diagnostics[0].summary ==
        "ephemeral variable \"ep\" cannot be used in the backend document: Cairn would keep its "
        "value");
  CHECK(r.config.provider.endpoint == "http://127.0.0.1:9");
}

TEST_CASE("ephemeral must be a boolean") {
  auto r = Load("kind: variable\nname: pw\nephemeral: maybe\n");
  INFO(Codes(r));
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics[0].code == "wrong_type");
  CHECK(r.diagnostics[0].summary == "ephemeral must be true or false, not a string");
}

}  // namespace ephemeral_test
