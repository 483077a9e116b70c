// The removed stage alone: removed documents (read by the documents stage),
// the declared resources and module instances in, the removals and
// diagnostics out.
#include "engine/manifest/removed.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "tests/engine/manifest/support/stage_docs.h"

namespace removed_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

namespace {

// Declared: network.main; instance.web[0], [1] (count 2); module.app[0]
// with its instance.vm; and module.none, a call with no instance.
struct RemovedStack {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  std::vector<ResourceConfig> resources;
  std::map<std::string, ResourceGroup> groups;
  std::vector<std::vector<ModuleStep>> modules = {{{"app", 0}}, {{"none", {}}}};

  RemovedStack() {
    Add("network", "main", {}, {std::monostate{}});
    Add("instance", "web", {}, {0, 1});
    Add("instance", "vm", {{"app", 0}}, {std::monostate{}});
  }

  void Add(const std::string& kind, const std::string& name, std::vector<ModuleStep> module,
           std::vector<AddressIndex> indexes) {
    ResourceGroup g{kind, name, module, 0, ResourceGroup::Mode::kSingle, {}};
    for (const auto& index : indexes) {
      ResourceConfig rc;
      rc.address = {kind, name, index, module};
      rc.kind = kind;
      g.instances.push_back(resources.size());
      resources.push_back(std::move(rc));
    }
    groups.emplace(ModulePathPrefix(module) + kind + "." + name, std::move(g));
  }

  Removals Run(const std::string& yaml) {
    StageDocs d(yaml);
    return LoadRemovals(d.docs, {resources, groups, *registry}, modules);
  }
};

}  // namespace

TEST_CASE("removed: a resource, an instance or a module, destroy true unless written") {
  RemovedStack s;
  Removals r = s.Run(
      "kind: removed\nfrom: network.old\n---\n"
      "kind: removed\nfrom: instance.web[2]\nlifecycle: {destroy: false}\n---\n"
      "kind: removed\nfrom: instance.db[\"a\"]\nlifecycle:\n  destroy: true\n---\n"
      "kind: removed\nfrom: module.gone\nlifecycle: {destroy: false}\n---\n"
      "kind: removed\nfrom: module.app[1].module.db\n---\n"
      "kind: removed\nfrom: module.app[0].instance.old\n");
  INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
  CHECK(r.diagnostics.empty());
  REQUIRE(r.removed.size() == 6);
  CHECK(r.removed[0].FromText() == "network.old");
  CHECK(r.removed[0].destroy);
  CHECK(r.removed[0].location.line == 2);
  CHECK(r.removed[0].location.column == 7);
  CHECK(r.removed[1].FromText() == "instance.web[2]");
  CHECK_FALSE(r.removed[1].destroy);
  CHECK(r.removed[2].FromText() == "instance.db[\"a\"]");
  CHECK(r.removed[2].destroy);
  CHECK_FALSE(r.removed[3].resource);
  CHECK(r.removed[3].FromText() == "module.gone");
  CHECK_FALSE(r.removed[3].destroy);
  CHECK(r.removed[4].FromText() == "module.app[1].module.db");
  CHECK(r.removed[5].FromText() == "module.app[0].instance.old");
}

TEST_CASE("removed: what it matches") {
  RemovedStack s;
  Removals r = s.Run(
      "kind: removed\nfrom: instance.old\n---\n"
      "kind: removed\nfrom: instance.one[1]\n---\n"
      "kind: removed\nfrom: module.gone\n---\n"
      "kind: removed\nfrom: module.app[1]\n");
  REQUIRE(r.removed.size() == 4);
  auto addr = [](const char* text) { return *ResourceAddress::Parse(text); };
  CHECK(r.removed[0].Matches(addr("instance.old")));
  CHECK(r.removed[0].Matches(addr("instance.old[3]")));
  CHECK_FALSE(r.removed[0].Matches(addr("module.x.instance.old")));
  CHECK(r.removed[1].Matches(addr("instance.one[1]")));
  CHECK_FALSE(r.removed[1].Matches(addr("instance.one[0]")));
  CHECK(r.removed[2].Matches(addr("module.gone.instance.a")));
  CHECK(r.removed[2].Matches(addr("module.gone[\"eu\"].module.x.network.b")));
  CHECK_FALSE(r.removed[2].Matches(addr("module.gonner.instance.a")));
  CHECK_FALSE(r.removed[2].Matches(addr("instance.a")));
  CHECK(r.removed[3].Matches(addr("module.app[1].instance.vm")));
  CHECK_FALSE(r.removed[3].Matches(addr("module.app[0].instance.vm")));
}

TEST_CASE("removed: misuse is a diagnostic at the offending text") {
  RemovedStack s;
  Removals r = s.Run(
      "kind: removed\nlifecycle: {destroy: false}\n---\n"                              // 1: no from
      "kind: removed\nfrom: \"instance..x\"\n---\n"                                    // 4
      "kind: removed\nfrom: netwrk.a\n---\n"                                           // 7
      "kind: removed\nfrom: network.a\nlifecycle: {destroy: no}\n---\n"                // 10
      "kind: removed\nfrom: network.b\nlifecycle: {destroy: false, when: now}\n---\n"  // 14
      "kind: removed\nfrom: network.c\nlifecycle: false\n---\n"                        // 18
      "kind: removed\nfrom: network.d\n---\n"                                          // 22
      "kind: removed\nfrom: network.d\n");                                             // 25
  std::vector<Diagnostic>& d = r.diagnostics;
  REQUIRE(d.size() == 7);
  CheckAt(d[0], "missing_field", 1, 7);
  CheckAt(d[1], "invalid_address", 5, 7);
  CHECK(d[1].summary == "from must be a resource address or a module path, not \"instance..x\"");
  CheckAt(d[2], "unknown_kind", 8, 7);
  CheckAt(d[3], "wrong_type", 12, 22);
  CheckAt(d[4], "unknown_field", 16, 29);
  CheckAt(d[5], "wrong_type", 20, 12);
  CheckAt(d[6], "duplicate_removed", 26, 7);
  REQUIRE(r.removed.size() == 1);
  CHECK(r.removed[0].FromText() == "network.d");
}

TEST_CASE("removed: what the manifests still declare cannot be removed") {
  RemovedStack s;
  Removals r = s.Run(
      "kind: removed\nfrom: network.main\n---\n"
      "kind: removed\nfrom: instance.web\n---\n"
      "kind: removed\nfrom: instance.web[1]\n---\n"
      "kind: removed\nfrom: instance.web[2]\n---\n"  // not declared: fine
      "kind: removed\nfrom: module.app\n---\n"
      "kind: removed\nfrom: module.app[0]\n---\n"
      "kind: removed\nfrom: module.none\n---\n"  // a call with no instance
      "kind: removed\nfrom: module.none[0]\n");  // fine
  std::vector<Diagnostic>& d = r.diagnostics;
  REQUIRE(d.size() == 6);
  CheckAt(d[0], "removed_still_declared", 2, 7);
  CHECK(d[0].summary ==
        "network.main is still declared: a removed document names what the manifests no "
        "longer have");
  CheckAt(d[1], "removed_still_declared", 5, 7);
  CheckAt(d[2], "removed_still_declared", 8, 7);
  CheckAt(d[3], "removed_still_declared", 14, 7);
  CHECK(d[3].summary ==
        "module.app is still declared (module.app[0]): a removed document names what the "
        "manifests no longer have");
  CheckAt(d[4], "removed_still_declared", 17, 7);
  CheckAt(d[5], "removed_still_declared", 20, 7);
  REQUIRE(r.removed.size() == 2);
  CHECK(r.removed[0].FromText() == "instance.web[2]");
  CHECK(r.removed[1].FromText() == "module.none[0]");
}

}  // namespace removed_test
