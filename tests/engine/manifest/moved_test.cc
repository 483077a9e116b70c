// The moves stage alone: moved documents (read by the documents stage) and
// the declared resources in, the moves and diagnostics out.
#include "engine/manifest/moved.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "tests/engine/manifest/support/stage_docs.h"

namespace moved_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

namespace {

// Declared: network.main; instance.web[0], [1] (count 2).
struct Stack {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  std::vector<ResourceConfig> resources;
  std::map<std::string, ResourceGroup> groups;

  Stack() {
    Add("network", "main", ResourceGroup::Mode::kSingle, {std::monostate{}});
    Add("instance", "web", ResourceGroup::Mode::kCount, {0, 1});
  }

  void Add(const std::string& kind, const std::string& name, ResourceGroup::Mode mode,
           std::vector<AddressIndex> indexes) {
    ResourceGroup g{kind, name, {}, 0, mode, {}};
    for (const auto& index : indexes) {
      ResourceConfig rc;
      rc.address = {kind, name, index, {}};
      rc.kind = kind;
      g.instances.push_back(resources.size());
      resources.push_back(std::move(rc));
    }
    groups.emplace(kind + "." + name, std::move(g));
  }

  // The moves of the moved documents of `yaml` (file m.yaml).
  Moves Run(const std::string& yaml, std::vector<MovedConfig> implicit = {}) {
    StageDocs d(yaml);
    return LoadMoves(d.docs, {resources, groups, *registry}, std::move(implicit));
  }
};

ResourceAddress Addr(const std::string& text) {
  auto a = ResourceAddress::Parse(text);
  REQUIRE(a);
  return *a;
}

}  // namespace

TEST_CASE("moved: a rename to a declared address is a move, at its document") {
  Stack s;
  Moves m = s.Run(
      "kind: moved\nfrom: network.old\nto: network.main\n---\n"
      "kind: moved\nfrom: instance.web\nto: instance.web[0]\n");
  CHECK(m.diagnostics.empty());
  REQUIRE(m.moved.size() == 2);
  CHECK(m.moved[0].from.ToString() == "network.old");
  CHECK(m.moved[0].to.ToString() == "network.main");
  CHECK(m.moved[0].location.line == 1);
  CHECK(m.moved[0].location.column == 7);
  CHECK_FALSE(m.moved[0].implicit);
  CHECK(m.moved[1].to.ToString() == "instance.web[0]");  // it gained count
  CHECK(m.moved[1].location.line == 5);
}

TEST_CASE("moved: both ends are resource addresses of a known kind") {
  Stack s;
  Moves m = s.Run(
      "kind: moved\nfrom: network.a\n---\n"
      "kind: moved\nfrom: \"not an address\"\nto: 3\n---\n"
      "kind: moved\nfrom: netwrk.a\nto: network.main\n");
  CHECK(m.moved.empty());
  REQUIRE(m.diagnostics.size() == 4);
  CheckAt(m.diagnostics[0], "missing_field", 1, 7);
  CHECK(m.diagnostics[0].summary == "missing required field \"to\" in moved document");
  CheckAt(m.diagnostics[1], "invalid_address", 5, 7);
  CHECK(m.diagnostics[1].summary ==
        "from must be a resource address or a module path, not \"not an address\"");
  CheckAt(m.diagnostics[2], "invalid_address", 6, 5);
  CHECK(m.diagnostics[2].summary.rfind("to must be a resource address or a module path, not a",
                                       0) == 0);
  CheckAt(m.diagnostics[3], "unknown_kind", 9, 7);
  CHECK(m.diagnostics[3].detail == "did you mean \"network\"?");
}

TEST_CASE("moved: a move keeps its kind and goes somewhere else") {
  Stack s;
  Moves m = s.Run(
      "kind: moved\nfrom: network.old\nto: volume.main\n---\n"
      "kind: moved\nfrom: network.old\nto: network.old\n");
  CHECK(m.moved.empty());
  REQUIRE(m.diagnostics.size() == 2);
  CheckAt(m.diagnostics[0], "moved_kind_mismatch", 3, 5);
  CheckAt(m.diagnostics[1], "moved_to_itself", 7, 5);
}

TEST_CASE("moved: an address is moved once, from where it is gone, to where it is declared") {
  Stack s;
  Moves m = s.Run(
      "kind: moved\nfrom: network.old\nto: network.main\n---\n"
      "kind: moved\nfrom: network.old\nto: network.main\n---\n"
      "kind: moved\nfrom: network.main\nto: network.other\n---\n"
      "kind: moved\nfrom: network.gone\nto: network.mian\n---\n"
      "kind: moved\nfrom: volume.gone\nto: volume.data\n");
  REQUIRE(m.moved.size() == 1);
  REQUIRE(m.diagnostics.size() == 4);
  CheckAt(m.diagnostics[0], "duplicate_moved", 6, 7);
  CHECK(m.diagnostics[0].detail == "first moved at m.yaml:2:7");
  CheckAt(m.diagnostics[1], "moved_from_declared", 10, 7);
  CheckAt(m.diagnostics[2], "moved_to_undeclared", 15, 5);
  CHECK(m.diagnostics[2].detail == "did you mean \"main\"?");
  CheckAt(m.diagnostics[3], "moved_to_undeclared", 19, 5);
  CHECK(m.diagnostics[3].detail == "a move is to an address the manifests declare");
}

TEST_CASE("moved: implied moves follow the written ones, unless one moves the same address") {
  Stack s;
  std::vector<MovedConfig> implicit = {{Addr("network.old"), Addr("network.main"), {}, true},
                                       {Addr("instance.web[0]"), Addr("instance.web"), {}, true}};
  Moves m = s.Run("kind: moved\nfrom: network.old\nto: network.main\n", implicit);
  CHECK(m.diagnostics.empty());
  REQUIRE(m.moved.size() == 2);
  CHECK_FALSE(m.moved[0].implicit);
  CHECK(m.moved[1].implicit);
  CHECK(m.moved[1].from.ToString() == "instance.web[0]");
}

TEST_CASE("moved: Declares is about exact addresses") {
  Stack s;
  DeclaredResources declared{s.resources, s.groups, *s.registry};
  CHECK(Declares(declared, Addr("network.main")));
  CHECK(Declares(declared, Addr("instance.web[1]")));
  CHECK_FALSE(Declares(declared, Addr("instance.web")));
  CHECK_FALSE(Declares(declared, Addr("instance.web[2]")));
  CHECK_FALSE(Declares(declared, Addr("volume.main")));
}

TEST_CASE("moved: whole modules move by path, checked against the declared module instances") {
  Stack s;
  // Declared: module.region (one instance), module.a["eu"], module.outer.module.a,
  // module.b[0] and [1].
  std::vector<std::vector<ModuleStep>> modules = {
      {{"region", {}}}, {{"a", std::string("eu")}}, {{"outer", {}}, {"a", {}}}, {{"b", 0}},
      {{"b", 1}},
  };
  StageDocs d(
      "kind: moved\nfrom: module.tier\nto: module.region\n---\n"           // 1
      "kind: moved\nfrom: module.a[0]\nto: module.a[\"eu\"]\n---\n"        // 5
      "kind: moved\nfrom: module.inner\nto: module.outer.module.a\n---\n"  // 9
      "kind: moved\nfrom: module.c\nto: module.b\n---\n"                   // 13
      "kind: moved\nfrom: module.old.module.x\nto: module.region\n");      // 17
  Moves m = LoadMoves(d.docs, {s.resources, s.groups, *s.registry}, {}, modules);
  INFO((m.diagnostics.empty() ? "" : m.diagnostics[0].summary));
  CHECK(m.diagnostics.empty());
  REQUIRE(m.moved.size() == 5);
  CHECK(m.moved[0].IsModuleMove());
  CHECK(m.moved[0].FromText() == "module.tier");
  CHECK(m.moved[0].ToText() == "module.region");
  CHECK(m.moved[1].ToText() == "module.a[\"eu\"]");
  CHECK(m.moved[2].ToText() == "module.outer.module.a");
  CHECK(m.moved[3].ToText() == "module.b");
  CHECK(m.moved[4].FromText() == "module.old.module.x");

  StageDocs bad(
      "kind: moved\nfrom: module.region\nto: module.b\n---\n"        // 1: from declared
      "kind: moved\nfrom: module.gone\nto: module.nowhere\n---\n"    // 5: to undeclared
      "kind: moved\nfrom: module.gone2\nto: network.main\n---\n"     // 9: module to resource
      "kind: moved\nfrom: module.x\nto: module.x\n---\n"             // 13: to itself
      "kind: moved\nfrom: module.a[1]\nto: module.a[\"us\"]\n---\n"  // 17: no such instance
      "kind: moved\nfrom: \"module.\"\nto: module.b\n");             // 21: not a path
  Moves e = LoadMoves(bad.docs, {s.resources, s.groups, *s.registry}, {}, modules);
  CHECK(e.moved.empty());
  REQUIRE(e.diagnostics.size() == 6);
  CheckAt(e.diagnostics[0], "moved_from_declared", 2, 7);
  CHECK(e.diagnostics[0].summary ==
        "module.region is still declared: a move is from an address the manifests no longer "
        "have");
  CheckAt(e.diagnostics[1], "moved_to_undeclared", 7, 5);
  CHECK(e.diagnostics[1].summary == "module.nowhere is not declared in the manifests");
  CheckAt(e.diagnostics[2], "moved_kind_mismatch", 11, 5);
  CHECK(e.diagnostics[2].summary ==
        "cannot move module.gone2 to network.main: a resource moves to a resource, a module to a "
        "module");
  CheckAt(e.diagnostics[3], "moved_to_itself", 15, 5);
  CheckAt(e.diagnostics[4], "moved_to_undeclared", 19, 5);
  CheckAt(e.diagnostics[5], "invalid_address", 22, 7);
}

}  // namespace moved_test
