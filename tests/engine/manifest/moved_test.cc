// The moves stage alone: moved documents (read by the documents stage) and
// the declared resources in, the moves and diagnostics out.
#include "engine/manifest/moved.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "tests/engine/manifest/support/stage_docs.h"

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
  CHECK(m.diagnostics[1].summary == "from must be a resource address, not \"not an address\"");
  CheckAt(m.diagnostics[2], "invalid_address", 6, 5);
  CHECK(m.diagnostics[2].summary.rfind("to must be a resource address, not a", 0) == 0);
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
