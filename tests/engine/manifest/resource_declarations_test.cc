// The resource-declarations stage alone: resource documents read by the
// documents stage, in the stack or in a module instance built by hand,
// their instances given as the loader would (count 2 for a document with
// count, none known for one with for_each); what is declared, what is
// refused, and the limit on instances.
#include "engine/manifest/resource_declarations.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace resource_declarations_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

struct Case : StageDocs {
  ModuleScopes scopes = ModuleScopes(1);
  std::vector<size_t> resource_docs;
  std::map<size_t, std::pair<bool, Instances>> instances;
  std::vector<size_t> asked;

  explicit Case(const std::string& yaml) : StageDocs(yaml) {
    for (size_t i = 0; i < parsed.docs.size(); ++i) {
      resource_docs.push_back(i);
      Instances in;
      bool ok = true;
      if (parsed.docs[i].value.contains("count")) {
        in.mode = Instances::Mode::kCount;
        in.indexes = {0, 1};
      } else if (parsed.docs[i].value.contains("for_each")) {
        in.mode = Instances::Mode::kForEach;
        ok = false;
      } else {
        in.indexes = {std::monostate{}};
      }
      instances[i] = {ok, std::move(in)};
    }
  }

  ResourceDeclarations Declare(size_t max_instances = 100) {
    auto of = [this](size_t doc) -> const std::pair<bool, Instances>& {
      asked.push_back(doc);
      return instances.at(doc);
    };
    return DeclareResources(parsed.docs, resource_docs, scopes, *registry, max_instances, of,
                            diags);
  }
};

TEST_CASE("resource declarations: each resource with its instances, lifecycle and spec") {
  Case c(
      "kind: network\nname: a\ncount: 2\nspec:\n  cidr: 10.0.0.0/16\n"
      "lifecycle:\n  prevent_destroy: true\ndepends_on: [network.b]\n---\n"
      "kind: network\nname: b\n");
  ResourceDeclarations d = c.Declare();
  CHECK(c.diags.empty());
  CHECK_FALSE(d.too_many_instances);
  REQUIRE(d.resources.size() == 2);
  const DeclaredResource& a = d.resources[0];
  CHECK(a.base == "network.a");
  CHECK(a.doc == 0);
  CHECK(a.group.kind == "network");
  CHECK(a.group.mode == Instances::Mode::kCount);
  CHECK(a.instances.indexes.size() == 2);
  CHECK(a.lifecycle.prevent_destroy);
  REQUIRE(a.spec);
  CHECK((*a.spec)["cidr"] == "10.0.0.0/16");
  CHECK(a.spec_node.Mark().line == 4);
  REQUIRE(d.depends_on.at("network.a").size() == 1);
  CHECK(d.depends_on.at("network.a")[0].first.ToString() == "network.b");
  // Without a spec: an empty one, located at the document.
  const DeclaredResource& b = d.resources[1];
  REQUIRE(b.spec);
  CHECK(b.spec->empty());
  CHECK(b.spec->is_object());
  CHECK(d.spec_nodes.size() == 2);
  CHECK(d.broken.empty());
  CHECK(c.asked == std::vector<size_t>{0, 1});
}

TEST_CASE("resource declarations: in a module with the depends_on of its calls") {
  Case c("kind: network\nname: a\n");
  c.scopes.push_back(ChildScope(c.scopes, 0, "app", 1, "/app", 0));
  c.scopes.push_back(ChildScope(c.scopes, 1, "db", {}, "/db", 0));
  c.scopes[0].calls["app"].depends_on = {{*ResourceAddress::Parse("network.x"), {}}};
  c.scopes[1].calls["db"].depends_on = {{*ResourceAddress::Parse("module.app[1].network.y"), {}}};
  c.parsed.docs[0].scope = 2;
  ResourceDeclarations d = c.Declare();
  REQUIRE(d.resources.size() == 1);
  CHECK(d.resources[0].base == "module.app[1].module.db.network.a");
  CHECK(d.resources[0].group.module.size() == 2);
  std::vector<std::string> deps;
  for (const auto& [address, at] : d.depends_on.at(d.resources[0].base))
    deps.push_back(address.ToString());
  CHECK(deps == std::vector<std::string>{"module.app[1].network.y", "network.x"});
}

TEST_CASE("resource declarations: what is refused and what is still declared") {
  Case c(
      "kind: network\nname: a\n---\n"
      "kind: network\nname: a\n---\n"
      "kind: network\nname: s\nspec: [1]\n---\n"
      "kind: network\nname: e\nfor_each: ${var.keys}\n");
  ResourceDeclarations d = c.Declare();
  REQUIRE(c.diags.size() == 2);
  CheckAt(c.diags[0], "duplicate_resource", 5, 7);
  CHECK(c.diags[0].detail == "first declared at m.yaml:2:7");
  CheckAt(c.diags[1], "wrong_type", 9, 7);
  CHECK(c.diags[1].summary == "spec must be a mapping, not a list");
  REQUIRE(d.resources.size() == 1);
  CHECK(d.resources[0].base == "network.a");
  // Broken ones stay declared, so that references to them are checked.
  REQUIRE(d.broken.size() == 2);
  CHECK(d.broken.at("network.e").mode == Instances::Mode::kForEach);
  CHECK(d.broken.count("network.s"));
  // The second network.a is not looked at further.
  CHECK(c.asked == std::vector<size_t>{0, 2, 3});
}

TEST_CASE("resource declarations: over the limit none is made") {
  Case c(
      "kind: network\nname: a\ncount: 2\n---\n"
      "kind: network\nname: b\ncount: 2\n---\n"
      "kind: network\nname: c\ncount: 2\n");
  ResourceDeclarations d = c.Declare(3);
  CHECK(d.too_many_instances);
  CHECK(d.resources.empty());
  REQUIRE(c.diags.size() == 1);
  CheckAt(c.diags[0], "too_many_instances", 7, 8);
  CHECK(c.diags[0].summary == "the stack has more than 3 resource instances");
  CHECK(c.diags[0].detail.rfind("network.b's 2 take it over the limit, with 2 declared before it",
                                0) == 0);
  // Nothing after it is looked at.
  CHECK(c.asked == std::vector<size_t>{0, 1});
  Case exact(
      "kind: network\nname: a\ncount: 2\n---\n"
      "kind: network\nname: b\n");
  CHECK_FALSE(exact.Declare(3).too_many_instances);
}

}  // namespace resource_declarations_test
