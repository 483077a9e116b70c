// Stack data sources (`kind: data`, `type: stack`) through the loader: the
// outputs another stack recorded in a real SQLite state file, read at load
// (usable in count and for_each), sensitive ones still sensitive, defaults
// for a stack with no state, and the settings' diagnostics.
#include "engine/manifest/stack_data.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "engine/manifest/loader.h"
#include "engine/state/open_state_store.h"
#include "engine/state/sqlite_state_store.h"
#include "tests/support/process.h"

namespace stack_data_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

// Records `outputs` (and which are sensitive) as the state of the stack in
// directory `dir`, as an apply would.
void RecordOutputs(const std::string& dir, std::map<std::string, Value> outputs,
                   std::set<std::string> sensitive = {}) {
  auto store = SqliteStateStore::Open(SqliteStateStore::DefaultPath(dir));
  REQUIRE(store.ok());
  REQUIRE((*store)->Load().ok());
  StateCommit commit;
  commit.outputs = std::move(outputs);
  commit.sensitive_outputs = std::move(sensitive);
  REQUIRE((*store)->Commit(commit).ok());
}

LoadResult LoadDir(const std::string& dir, const std::string& workspace = "default") {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.paths = {dir};
  o.getenv = [](const char*) -> const char* { return nullptr; };
  o.workspace = workspace;
  return LoadStack(o);
}

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + ": " +
           d.code + ": " + d.summary + " (" + d.detail + ")\n";
  }
  return out;
}

const ResourceConfig* Find(const StackConfig& c, const std::string& address) {
  for (const auto& r : c.resources) {
    if (r.address.ToString() == address) return &r;
  }
  return nullptr;
}

const char* kNetworkDoc = "kind: data\nname: net\ntype: stack\ndir: ../network\n---\n";

}  // namespace

TEST_CASE("stack_data: another stack's outputs are known at load") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/network", {{"network_id", "6c1f8a52-1b7e-4f6e-9d3c-2a4b5c6d7e8f"},
                                          {"zones", Value::array({"a", "b"})},
                                          {"region", "eu-central"}});
  WriteFile(tmp.path() + "/app/main.yaml",
            std::string(kNetworkDoc) +
                "kind: instance\nname: web\nfor_each: ${toset(data.stack.net.outputs.zones)}\n"
                "spec:\n  name: web-${each.key}\n  region: ${data.stack.net.outputs.region}\n"
                "  plan: s-1vcpu-1gb\n  image: debian-12\n"
                "  network: ${data.stack.net.outputs.network_id}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  INFO(Codes(r));
  REQUIRE(r.ok());
  // for_each over a list the other stack recorded: one instance per zone.
  const ResourceConfig* a = Find(r.config, "instance.web[\"a\"]");
  REQUIRE(a);
  REQUIRE(Find(r.config, "instance.web[\"b\"]"));
  CHECK(r.config.resources.size() == 2);
  CHECK(a->spec["region"] == "eu-central");
  CHECK(a->spec["network"] == "6c1f8a52-1b7e-4f6e-9d3c-2a4b5c6d7e8f");
  CHECK(a->spec["name"] == "web-a");
  // Nothing is left for plan to read: no API data source, no reference.
  CHECK(r.config.data.empty());
  CHECK(a->depends_on.empty());
}

TEST_CASE("stack_data: a sensitive output stays sensitive") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/network", {{"password", "Sekr1tValue"}, {"plain", "x"}},
                {"password"});
  const std::string data = std::string(kNetworkDoc);
  SECTION("an output of this stack that carries it must say sensitive") {
    WriteFile(tmp.path() + "/app/main.yaml",
              data + "kind: output\nname: leak\nvalue: pw-${data.stack.net.outputs.password}\n");
    LoadResult r = LoadDir(tmp.path() + "/app");
    REQUIRE(r.diagnostics.size() == 1);
    const Diagnostic& d = r.diagnostics[0];
    CHECK(d.code == "output_not_sensitive");
    CHECK(d.summary ==
          "output \"leak\" is built from sensitive output \"password\" of data.stack.net, so it "
          "must be declared sensitive");
    CHECK(d.location.line == 8);
    CHECK(d.location.column == 8);
  }
  SECTION("declared sensitive, it loads; the plain output is not marked") {
    WriteFile(tmp.path() + "/app/main.yaml",
              data +
                  "kind: output\nname: pw\nsensitive: true\n"
                  "value: ${data.stack.net.outputs.password}\n---\n"
                  "kind: output\nname: plain\nvalue: ${data.stack.net.outputs.plain}\n");
    LoadResult r = LoadDir(tmp.path() + "/app");
    INFO(Codes(r));
    CHECK(r.ok());
    CHECK(r.diagnostics.empty());
  }
}

TEST_CASE("stack_data: defaults stand for a stack with no state or a missing output") {
  TempDir tmp;
  const std::string doc =
      "kind: data\nname: net\ntype: stack\ndir: ../network\n"
      "defaults: {region: us-east, size: 2}\n---\n"
      "kind: network\nname: n\ncount: ${data.stack.net.outputs.size}\n"
      "spec:\n  name: n${count.index}\n  region: ${data.stack.net.outputs.region}\n"
      "  cidr: 10.0.0.0/16\n";
  WriteFile(tmp.path() + "/app/main.yaml", doc);
  SECTION("no state: the defaults") {
    LoadResult r = LoadDir(tmp.path() + "/app");
    INFO(Codes(r));
    REQUIRE(r.ok());
    REQUIRE(r.config.resources.size() == 2);
    CHECK(r.config.resources[0].spec["region"] == "us-east");
  }
  SECTION("a recorded output replaces its default") {
    RecordOutputs(tmp.path() + "/network", {{"region", "eu-central"}});
    LoadResult r = LoadDir(tmp.path() + "/app");
    INFO(Codes(r));
    REQUIRE(r.ok());
    REQUIRE(r.config.resources.size() == 2);
    CHECK(r.config.resources[0].spec["region"] == "eu-central");
  }
}

TEST_CASE("stack_data: a backend path is read, relative to the document") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/elsewhere", {{"region", "eu-central"}});
  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: net\ntype: stack\n"
            "backend: {type: sqlite, path: ../elsewhere/.cairn/state.db}\n---\n"
            "kind: output\nname: r\nvalue: ${data.stack.net.outputs.region}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  INFO(Codes(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.outputs.size() == 1);
  CHECK(r.config.outputs[0].value == "eu-central");
}

TEST_CASE("stack_data: a stack with no state and no defaults is stack_not_found") {
  TempDir tmp;
  WriteFile(tmp.path() + "/app/main.yaml",
            std::string(kNetworkDoc) +
                "kind: output\nname: r\nvalue: ${data.stack.net.outputs.region}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  INFO(Codes(r));
  // Reported once, at the document's name, though it is also referenced.
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == "stack_not_found");
  CHECK(d.summary == "data.stack.net: the stack has no state to read outputs from");
  CHECK(d.location.line == 2);
  CHECK(d.location.column == 7);
  CHECK(d.detail.find("apply that stack first") != std::string::npos);
  // Reading created nothing there.
  CHECK(!std::filesystem::exists(tmp.path() + "/network/.cairn"));
}

TEST_CASE("stack_data: misuse is reported with positions, all at once") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/network", {{"region", "eu-central"}});
  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: a\ntype: stack\n---\n"                          // 1-3
            "kind: data\nname: b\ntype: stack\ndir: ../network\nid: x\n---\n"  // 5-9
            "kind: data\nname: c\ntype: stack\nbackend: {type: postgres}\n---\n"
            "kind: data\nname: d\ntype: network\ndir: ../network\nid: x\n---\n"
            "kind: data\nname: e\ntype: stack\nbackend: {url: postgres://u:p@h/db}\n---\n"
            "kind: data\nname: net\ntype: stack\ndir: ../network\n---\n"
            "kind: output\nname: o1\nvalue: ${data.stack.nett.outputs.region}\n---\n"
            "kind: output\nname: o2\nvalue: ${data.stack.net.region}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  std::string codes = Codes(r);
  INFO(codes);
  CHECK(codes.find("1:7: missing_field: a stack data document needs dir: or backend:") !=
        std::string::npos);
  CHECK(codes.find("9:1: invalid_value: a stack data source reads outputs: it has no id") !=
        std::string::npos);
  CHECK(codes.find("14:10: missing_field: a postgres backend needs name") != std::string::npos);
  CHECK(codes.find("19:1: invalid_value: dir applies to stack data sources (type: stack) only") !=
        std::string::npos);
  CHECK(codes.find("25:10: secret_in_manifest: backend settings must not hold a connection URL") !=
        std::string::npos);
  CHECK(codes.find("34:10: unknown_reference: reference to undeclared data source "
                   "data.stack.nett (did you mean \"net\"?)") != std::string::npos);
  CHECK(codes.find("38:10: unknown_attribute: a stack data source has one attribute, outputs, "
                   "not \"region\"") != std::string::npos);
  CHECK(r.diagnostics.size() == 7);
}

TEST_CASE("stack_data: a module cannot read the stack's stack data source") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/network", {{"region", "eu-central"}});
  WriteFile(tmp.path() + "/app/main.yaml",
            std::string(kNetworkDoc) + "kind: module\nname: m\nsource: ./mod\n");
  WriteFile(tmp.path() + "/app/mod/main.yaml",
            "kind: output\nname: r\nvalue: ${data.stack.net.outputs.region}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  INFO(Codes(r));
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].code == "module_data_reference");
}

TEST_CASE("stack_data: an unreachable postgres backend is stack_read_failed, without its URL") {
  TempDir tmp;
  // Port 1 on loopback: nothing listens there.
  setenv("CAIRN_TEST_STACK_DATA_URL",
         "postgresql://cairn:hunter2-secret@127.0.0.1:1/none?connect_timeout=5", 1);
  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: net\ntype: stack\n"
            "backend: {type: postgres, name: network, url_env: CAIRN_TEST_STACK_DATA_URL}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  unsetenv("CAIRN_TEST_STACK_DATA_URL");
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "stack_read_failed");
  CHECK(r.diagnostics[0].summary == "data.stack.net: cannot read the stack's state");
  CHECK(Codes(r).find("hunter2-secret") == std::string::npos);
}

TEST_CASE("stack_data: outputs recorded on PostgreSQL", "[.][postgres]") {
  const char* url = std::getenv("CAIRN_TEST_PG_URL");
  REQUIRE(url != nullptr);
  const std::string name = "stack-data-" + std::to_string(::getpid());
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_PG_URL";
  spec.stack_name = name;
  {
    auto store = OpenStateStore("/tmp", spec);
    INFO(store.status().ToString());
    REQUIRE(store.ok());
    REQUIRE((*store)->Load().ok());
    StateCommit commit;
    commit.outputs = std::map<std::string, Value>{{"region", "eu-central"}, {"pw", "s3cret"}};
    commit.sensitive_outputs = {"pw"};
    REQUIRE((*store)->Commit(commit).ok());
  }
  TempDir tmp;
  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: net\ntype: stack\n"
            "backend: {type: postgres, name: " +
                name +
                ", url_env: CAIRN_TEST_PG_URL}\n---\n"
                "kind: output\nname: r\nvalue: ${data.stack.net.outputs.region}\n---\n"
                "kind: output\nname: pw\nvalue: ${data.stack.net.outputs.pw}\n");
  LoadResult r = LoadDir(tmp.path() + "/app");
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);  // pw is sensitive there, so here
  CHECK(r.diagnostics[0].code == "output_not_sensitive");
  REQUIRE(r.config.outputs.size() == 2);
  CHECK(r.config.outputs[0].value == "eu-central");
}

TEST_CASE("stack_data: workspace picks which of the other stack's states is read") {
  TempDir tmp;
  RecordOutputs(tmp.path() + "/network", {{"region", "eu-central"}});
  {
    BackendSpec prod;
    prod.workspace = "prod";
    auto store = OpenStateStore(tmp.path() + "/network", prod);
    REQUIRE(store.ok());
    REQUIRE((*store)->Load().ok());
    StateCommit commit;
    commit.outputs = std::map<std::string, Value>{{"region", "us-east"}};
    REQUIRE((*store)->Commit(commit).ok());
  }
  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: same\ntype: stack\ndir: ../network\nworkspace: ${workspace}\n---\n"
            "kind: data\nname: fixed\ntype: stack\ndir: ../network\n---\n"
            "kind: output\nname: same\nvalue: ${data.stack.same.outputs.region}\n---\n"
            "kind: output\nname: fixed\nvalue: ${data.stack.fixed.outputs.region}\n");
  LoadResult r = LoadDir(tmp.path() + "/app", "prod");
  INFO(Codes(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.outputs.size() == 2);
  CHECK(r.config.outputs[0].value == "us-east");     // prod's, as this stack's workspace
  CHECK(r.config.outputs[1].value == "eu-central");  // no workspace: the default's

  WriteFile(tmp.path() + "/app/main.yaml",
            "kind: data\nname: bad\ntype: stack\ndir: ../network\nworkspace: Prod!\n");
  LoadResult bad = LoadDir(tmp.path() + "/app");
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "invalid_value");
  CHECK(bad.diagnostics[0].location.line == 5);
}

}  // namespace stack_data_test
