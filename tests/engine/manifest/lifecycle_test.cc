// The lifecycle stage alone: a resource document (read by the documents
// stage) in, its lifecycle and depends_on entries and diagnostics out.
#include "engine/manifest/lifecycle.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace lifecycle_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

namespace {

// The lifecycle of the one resource document of `yaml`, in module app[1].
struct Doc : StageDocs {
  const std::vector<ModuleStep> module = {{"app", 1}};
  explicit Doc(const std::string& yaml) : StageDocs(yaml) { REQUIRE(docs.size() == 1); }
  cairn::Lifecycle Read() { return LoadLifecycle(parsed.docs[0], *registry, module, diags); }
  std::vector<std::pair<ResourceAddress, SourceLocation>> DependsOn() {
    return LoadDependsOn(parsed.docs[0], module, diags);
  }
};

}  // namespace

TEST_CASE("lifecycle: what a lifecycle sets, its addresses in the document's module") {
  Doc d(
      "kind: instance\nname: web\nlifecycle:\n"
      "  prevent_destroy: true\n"
      "  create_before_destroy: true\n"
      "  ignore_changes: [plan, image]\n"
      "  replace_triggered_by: [network.main, \"instance.db[0].image\"]\n"
      "  precondition: []\n");
  Lifecycle lc = d.Read();
  CHECK(d.diags.empty());
  CHECK(lc.prevent_destroy);
  CHECK(lc.create_before_destroy);
  CHECK(lc.ignore_changes == std::vector<std::string>{"plan", "image"});
  REQUIRE(lc.replace_triggered_by.size() == 2);
  const auto& t0 = lc.replace_triggered_by[0];
  CHECK(t0.address.ToString() == "module.app[1].network.main");
  CHECK(t0.whole);
  CHECK(t0.attr.empty());
  CHECK(t0.location.line == 7);
  CHECK(t0.location.column == 26);
  const auto& t1 = lc.replace_triggered_by[1];
  CHECK(t1.address.ToString() == "module.app[1].instance.db[0]");
  CHECK_FALSE(t1.whole);
  CHECK(t1.attr == "image");
}

TEST_CASE("lifecycle: each problem of a lifecycle, where it is") {
  Doc d(
      "kind: instance\nname: web\nlifecycle:\n"
      "  prevent_destroy: yes\n"
      "  ignore_changes: [1, id, colour]\n"
      "  replace_triggered_by: [module.a.network.x, 3]\n"
      "  prevent_destory: true\n");
  Lifecycle lc = d.Read();
  std::vector<std::string> codes;
  for (const auto& diag : d.diags) codes.push_back(diag.code);
  // In key order (the value's keys are sorted).
  REQUIRE(codes == std::vector<std::string>{"invalid_ignore_changes", "invalid_ignore_changes",
                                            "invalid_ignore_changes", "unknown_field", "wrong_type",
                                            "invalid_replace_trigger", "invalid_replace_trigger"});
  CheckAt(d.diags[0], "invalid_ignore_changes", 5, 20);
  CheckAt(d.diags[1], "invalid_ignore_changes", 5, 23);
  CHECK(d.diags[1].summary == "ignore_changes names \"id\", a computed attribute of instance");
  CheckAt(d.diags[2], "invalid_ignore_changes", 5, 27);
  CHECK(d.diags[2].summary == "ignore_changes names \"colour\", which is not a field of instance");
  CheckAt(d.diags[3], "unknown_field", 7, 3);
  CHECK(d.diags[3].detail == "did you mean \"prevent_destroy\"?");
  CheckAt(d.diags[4], "wrong_type", 4, 20);
  CheckAt(d.diags[5], "invalid_replace_trigger", 6, 26);
  CheckAt(d.diags[6], "invalid_replace_trigger", 6, 46);
  CHECK_FALSE(lc.prevent_destroy);
  CHECK(lc.ignore_changes.empty());
  CHECK(lc.replace_triggered_by.empty());
}

TEST_CASE("lifecycle: a lifecycle and its lists have their shapes") {
  Doc scalar("kind: instance\nname: web\nlifecycle: 3\n");
  scalar.Read();
  REQUIRE(scalar.diags.size() == 1);
  CheckAt(scalar.diags[0], "wrong_type", 3, 12);
  CHECK(scalar.diags[0].summary == "lifecycle must be a mapping, not an integer");

  Doc lists(
      "kind: instance\nname: web\nlifecycle: {ignore_changes: plan, replace_triggered_by: x}\n");
  lists.Read();
  REQUIRE(lists.diags.size() == 2);
  CheckAt(lists.diags[0], "wrong_type", 3, 29);
  CheckAt(lists.diags[1], "wrong_type", 3, 57);
}

TEST_CASE("lifecycle: depends_on is a list of addresses of the document's module") {
  Doc d(
      "kind: instance\nname: web\n"
      "depends_on: [network.main, \"instance.db[\\\"eu\\\"]\", module.x.network.y, 7, not-one]\n");
  auto entries = d.DependsOn();
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].first.ToString() == "module.app[1].network.main");
  CHECK(entries[0].second.line == 3);
  CHECK(entries[0].second.column == 14);
  CHECK(entries[1].first.ToString() == "module.app[1].instance.db[\"eu\"]");
  REQUIRE(d.diags.size() == 3);
  CheckAt(d.diags[0], "module_internal_reference", 3, 51);
  CheckAt(d.diags[1], "invalid_depends_on", 3, 71);
  CHECK(d.diags[1].summary == "depends_on entry an integer is not a resource address");
  CheckAt(d.diags[2], "invalid_depends_on", 3, 74);
  CHECK(d.diags[2].summary == "depends_on entry \"not-one\" is not a resource address");

  Doc scalar("kind: instance\nname: web\ndepends_on: network.main\n");
  CHECK(scalar.DependsOn().empty());
  REQUIRE(scalar.diags.size() == 1);
  CheckAt(scalar.diags[0], "invalid_depends_on", 3, 13);
}

}  // namespace lifecycle_test
