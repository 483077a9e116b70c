// The validate-specs stage alone: evaluated specs and the YAML they were
// written in, in; schema and key diagnostics, at the node each is about, out.
#include "engine/manifest/validate_specs.h"

#include <catch2/catch.hpp>
#include <set>

#include "base/schema/schema_registry.h"
#include "engine/manifest/yaml_tree.h"

namespace validate_specs_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const char* kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH "
    "PRIVATE KEY-----\n";

struct Fixture {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  std::unique_ptr<YamlTree> tree;
  std::vector<ResourceConfig> resources;
  std::vector<SpecSource> sources;

  explicit Fixture(const std::string& yaml) : tree(YamlTree::Parse(yaml)) {
    REQUIRE_FALSE(tree->error);
  }

  // Document `d` of the text declares a network whose spec evaluated to
  // `spec` (with or without a spec: node).
  void Add(size_t d, Value spec, bool keyed = false) {
    ResourceConfig rc;
    rc.kind = "network";
    rc.address = {"network", "n" + std::to_string(d), std::monostate{}, {}};
    rc.spec = std::move(spec);
    resources.push_back(std::move(rc));
    YamlNode doc = tree->documents.at(d);
    YamlNode spec_node = doc.Get("spec").IsDefined() ? doc.Get("spec") : doc;
    SourceLocation kind_at{"net.yaml", 100 + static_cast<int>(d), 7, 7};
    sources.push_back({"net.yaml", doc, kind_at, spec_node, keyed});
  }

  std::vector<Diagnostic> Run() { return ValidateSpecs(resources, sources, *registry); }
};

Value Net(const std::string& region, const std::string& cidr) {
  return {{"name", "n"}, {"region", region}, {"cidr", cidr}};
}

}  // namespace

TEST_CASE("validate_specs: a valid spec has no diagnostics") {
  Fixture f(
      "kind: network\nname: n\nspec:\n  name: n\n  region: eu-central\n  cidr: 10.0.0.0/16\n");
  f.Add(0, Net("eu-central", "10.0.0.0/16"));
  CHECK(f.Run().empty());
}

TEST_CASE("validate_specs: a bad value points at its node in the spec") {
  Fixture f("kind: network\nname: n\nspec:\n  name: n\n  region: mars\n  cidr: 10.0.0.0/16\n");
  f.Add(0, Net("mars", "10.0.0.0/16"));
  auto diags = f.Run();
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].is_error());
  CHECK(diags[0].code == "invalid_value");
  CHECK(diags[0].location.file == "net.yaml");
  CHECK(diags[0].location.line == 5);
  CHECK(diags[0].location.column == 11);
}

TEST_CASE("validate_specs: a problem of the whole spec points at the spec: key") {
  Fixture f("kind: network\nname: n\nspec:\n  name: n\n  region: eu-central\n");
  f.Add(0, Value{{"name", "n"}, {"region", "eu-central"}});
  auto diags = f.Run();
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "missing_field");
  CHECK(diags[0].location.line == 3);
  CHECK(diags[0].location.column == 1);
}

TEST_CASE("validate_specs: without a spec: node, the document's kind is pointed at") {
  Fixture f("kind: network\nname: n\n---\nkind: network\nname: m\nspec: {name: m}\n");
  f.Add(0, Value{{"name", "n"}, {"region", "eu-central"}});
  auto diags = f.Run();
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "missing_field");
  CHECK(diags[0].location.line == 100);
  CHECK(diags[0].location.column == 7);
}

TEST_CASE("validate_specs: diagnostics come in resource order") {
  Fixture f(
      "kind: network\nname: a\nspec: {name: a, region: mars, cidr: 10.0.0.0/16}\n---\n"
      "kind: network\nname: b\nspec: {name: b, region: venus, cidr: 10.0.0.0/16}\n");
  f.Add(1, Net("venus", "10.0.0.0/16"));
  f.Add(0, Net("mars", "10.0.0.0/16"));
  auto diags = f.Run();
  REQUIRE(diags.size() == 2);
  CHECK(diags[0].location.line == 7);
  CHECK(diags[1].location.line == 3);
}

TEST_CASE("validate_specs: a key that came through a value is private_key_material, once") {
  Fixture f(
      "kind: network\nname: n\nspec:\n  name: ${var.k}\n  region: eu-central\n"
      "  cidr: 10.0.0.0/16\n");
  Value spec = Net("eu-central", "10.0.0.0/16");
  spec["name"] = kKey;
  f.Add(0, spec);
  auto diags = f.Run();
  bool found = false;
  for (const auto& d : diags) {
    if (d.code != "private_key_material") continue;
    CHECK_FALSE(found);
    found = true;
    CHECK(d.summary == "private key material in a value");
    CHECK(d.location.line == 4);
    CHECK(d.location.column == 9);
    CHECK(d.detail.find(kKey) == std::string::npos);
  }
  CHECK(found);
}

TEST_CASE("validate_specs: a file reported for its key is not scanned again") {
  Fixture f(
      "kind: network\nname: n\nspec:\n  name: ${var.k}\n  region: eu-central\n"
      "  cidr: 10.0.0.0/16\n");
  Value spec = Net("eu-central", "10.0.0.0/16");
  spec["name"] = kKey;
  f.Add(0, spec, /*keyed=*/true);
  for (const auto& d : f.Run()) CHECK(d.code != "private_key_material");
}

TEST_CASE("validate_specs: large stacks validate on threads and miss nothing") {
  std::string yaml;
  for (int i = 0; i < 600; ++i) {
    if (i) yaml += "---\n";
    yaml +=
        "kind: network\nname: n" + std::to_string(i) + "\nspec: {name: x, region: r, cidr: c}\n";
  }
  Fixture f(yaml);
  for (size_t i = 0; i < 600; ++i) f.Add(i, Net(i % 2 ? "mars" : "eu-central", "10.0.0.0/16"));
  auto diags = f.Run();
  CHECK(diags.size() == 300);
  std::set<int> lines;
  for (const auto& d : diags) lines.insert(d.location.line);
  CHECK(lines.size() == 300);
  CHECK(lines.count(4 * 1 + 3) == 1);  // document 1, the first with mars
  CHECK(lines.count(3) == 0);          // document 0 is valid
}

}  // namespace validate_specs_test
