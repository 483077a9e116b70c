// `kind: import` documents in whole stacks (their id and to's indexes are
// evaluated by the loader): the imports a stack declares, for_each, and
// every diagnostic at file:line:col; the scanner of to's index
// expressions alone.
#include "engine/manifest/imports.h"

#include <catch2/catch.hpp>

#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace imports_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

LoadOptions ImportOptions() {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

LoadResult LoadImportStack(const std::string& yaml, LoadOptions o = ImportOptions()) {
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

std::string ImportDiags(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + "\n";
  }
  return out;
}

constexpr const char* kImportNet =
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n---\n";
constexpr const char* kImportWeb =
    "kind: instance\nname: web\nfor_each: [a, b]\n"
    "spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n---\n";

}  // namespace

TEST_CASE("import: to a declared resource with the id a string or an expression") {
  auto r = LoadImportStack(std::string(kImportNet) + kImportWeb +
                           "kind: variable\nname: net_id\ndefault: net-1\n---\n"
                           "kind: local\nname: suffix\nvalue: x\n---\n"
                           "kind: import\nto: network.core\nid: ${var.net_id}\n---\n"
                           "kind: import\nto: 'instance.web[\"a\"]'\nid: inst-${local.suffix}\n");
  INFO(ImportDiags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.imports.size() == 2);
  CHECK(r.config.imports[0].to.ToString() == "network.core");
  CHECK(r.config.imports[0].id == "net-1");
  CHECK(r.config.imports[0].declared);
  CHECK(r.config.imports[0].location.line == 19);
  CHECK(r.config.imports[0].location.column == 5);
  CHECK(r.config.imports[0].id_location.line == 20);
  CHECK(r.config.imports[1].to.ToString() == "instance.web[\"a\"]");
  CHECK(r.config.imports[1].id == "inst-x");
}

TEST_CASE("import: for_each gives one import per key and to's index from each.key") {
  auto r = LoadImportStack(std::string(kImportWeb) +
                           "kind: import\nfor_each: {a: inst-1, b: inst-2}\n"
                           "to: instance.web[each.key]\nid: ${each.value}\n");
  INFO(ImportDiags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.imports.size() == 2);
  CHECK(r.config.imports[0].to.ToString() == "instance.web[\"a\"]");
  CHECK(r.config.imports[0].id == "inst-1");
  CHECK(r.config.imports[1].to.ToString() == "instance.web[\"b\"]");
  CHECK(r.config.imports[1].id == "inst-2");
}

TEST_CASE("import: for_each of objects and to's index from a field of each.value") {
  auto r = LoadImportStack(
      "kind: instance\nname: web\ncount: 2\n"
      "spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n---\n"
      "kind: import\nfor_each: {x: {n: 0, id: i-0}, y: {n: 1, id: i-1}}\n"
      "to: 'instance.web[ each.value.n ]'\nid: ${each.value.id}\n");
  INFO(ImportDiags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.imports.size() == 2);
  CHECK(r.config.imports[0].to.ToString() == "instance.web[0]");
  CHECK(r.config.imports[1].to.ToString() == "instance.web[1]");
  CHECK(r.config.imports[1].id == "i-1");
}

TEST_CASE("import: every mistake is reported at once and at its place") {
  auto r = LoadImportStack(std::string(kImportNet) + kImportWeb +                     // lines 1-9
                           "kind: import\nto: network.core\nid: n-1\n---\n"           // 10
                           "kind: import\nto: network.core\nid: n-2\n---\n"           // 14
                           "kind: import\nto: network.other\nid: n-3\n---\n"          // 18
                           "kind: import\nto: instance.web\nid: i-1\n---\n"           // 22
                           "kind: import\nto: 'instance.web[\"a\"]'\nid: 7\n---\n"    // 26
                           "kind: import\nto: 'instance.web[\"b\"]'\nid: n-1\n---\n"  // 30
                           "kind: import\nto: module.app\nid: m\n---\n"               // 34
                           "kind: import\nid: x\n---\n"                               // 38
                           "kind: import\nto: netwrk.a\nid: x\nwhen: now\n---\n"      // 41
                           "kind: removed\nfrom: network.gone\n---\n"                 // 46
                           "kind: import\nto: network.gone\nid: g\n");                // 49
  CHECK(ImportDiags(r) ==
        "main.yaml:15:5: duplicate_import: network.core is imported twice\n"
        "main.yaml:19:5: import_to_undeclared: network.other is not a resource instance the "
        "manifests declare\n"
        "main.yaml:23:5: import_to_undeclared: instance.web is not a resource instance the "
        "manifests declare\n"
        "main.yaml:28:5: wrong_type: id must be a string, not an integer\n"
        "main.yaml:35:5: invalid_address: to must be a resource instance, not the module path "
        "\"module.app\"\n"
        "main.yaml:38:7: missing_field: missing required field \"to\" in import document\n"
        "main.yaml:42:5: unknown_kind: unknown kind \"netwrk\" in to\n"
        "main.yaml:44:1: unknown_field: unknown field \"when\" in import document\n"
        "main.yaml:50:5: import_and_removed: network.gone is imported, but a removed document "
        "removes network.gone\n");
  // Two imports of one object: at the second's id (not above: instance and
  // network ids are of different kinds, so n-1 twice is not it).
  auto twice = LoadImportStack(std::string(kImportWeb) +
                               "kind: import\nto: 'instance.web[\"a\"]'\nid: i-1\n---\n"
                               "kind: import\nto: 'instance.web[\"b\"]'\nid: i-1\n");
  CHECK(ImportDiags(twice) ==
        "main.yaml:12:5: duplicate_import_id: instance i-1 is imported twice, at "
        "instance.web[\"a\"] and instance.web[\"b\"]\n");
}

TEST_CASE("import: the hint says what to import to instead") {
  auto r = LoadImportStack(std::string(kImportWeb) +
                           "kind: import\nto: instance.web\nid: i-1\n---\n"
                           "kind: import\nto: instance.wbe\nid: i-2\n");
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].detail ==
        "instance.web has count or for_each: import to one of its instances, such as "
        "instance.web[\"a\"]");
  CHECK(r.diagnostics[1].detail.find("did you mean \"web\"") != std::string::npos);
  CHECK(r.diagnostics[1].detail.find("--generate-config") != std::string::npos);
}

TEST_CASE(
    "import: id and to are known at load: no resource attribute and each only with for_each") {
  auto r = LoadImportStack(std::string(kImportNet) + kImportWeb +
                           "kind: import\nto: 'instance.web[\"a\"]'\nid: ${network.core.id}\n---\n"
                           "kind: import\nto: instance.web[each.key]\nid: i-1\n---\n"
                           "kind: import\nfor_each: [a]\nto: instance.web[each.value.x]\nid: i\n");
  // Each at the expression itself: inside to's brackets too.
  CHECK(ImportDiags(r) ==
        "main.yaml:12:7: reference_not_allowed: an import's id cannot refer to network.core.id: "
        "resource attributes are known only during apply\n"
        "main.yaml:15:18: each_outside_for_each: each.key is only available in a resource with "
        "for_each\n"
        "main.yaml:20:18: type_mismatch: cannot read attribute \"x\" of a string\n");
  CHECK(r.config.imports.empty());
}

TEST_CASE("import: an index that is neither a string nor a whole number is invalid_address") {
  auto r = LoadImportStack(std::string(kImportWeb) +
                           "kind: import\nfor_each: {a: [1]}\nto: instance.web[each.value]\n"
                           "id: i\n");
  CHECK(ImportDiags(r) ==
        "main.yaml:8:5: invalid_address: to must be a resource instance address: the index "
        "each.value must be a string or a whole number, not a list\n");
}

TEST_CASE("import: an undeclared resource of the stack is loaded for --generate-config only") {
  const std::string yaml = std::string(kImportWeb) +
                           "kind: import\nto: network.core\nid: n-1\n---\n"
                           "kind: import\nto: 'network.many[0]'\nid: n-2\n";
  auto refused = LoadImportStack(yaml);
  CHECK(ImportDiags(refused).find("main.yaml:7:5: import_to_undeclared") != std::string::npos);
  LoadOptions o = ImportOptions();
  o.allow_undeclared_imports = true;
  auto r = LoadImportStack(yaml, o);
  // With an index, no document can be written for it.
  CHECK(ImportDiags(r) ==
        "main.yaml:11:5: import_to_undeclared: network.many[0] is not a resource instance the "
        "manifests declare\n");
  REQUIRE(r.config.imports.size() == 1);
  CHECK_FALSE(r.config.imports[0].declared);
  CHECK(r.config.imports[0].to.ToString() == "network.core");
}

TEST_CASE("import: to a resource inside a module and an import document in a module is refused") {
  TempDir tmp;
  WriteFile(tmp.path() + "/main.yaml",
            "kind: module\nname: app\nsource: mod\n---\n"
            "kind: import\nto: module.app.network.main\nid: n-1\n");
  WriteFile(tmp.path() + "/mod/net.yaml",
            "kind: network\nname: main\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n");
  LoadOptions o = ImportOptions();
  o.paths = {tmp.path()};
  auto r = LoadStack(o);
  INFO(ImportDiags(r));
  REQUIRE(r.ok());
  REQUIRE(r.config.imports.size() == 1);
  CHECK(r.config.imports[0].to.ToString() == "module.app.network.main");

  WriteFile(tmp.path() + "/mod/import.yaml", "kind: import\nto: network.main\nid: n-1\n");
  auto in_module = LoadStack(o);
  REQUIRE(in_module.diagnostics.size() == 1);
  CHECK(in_module.diagnostics[0].code == "not_in_module");
  CHECK(in_module.diagnostics[0].location.line == 1);
}

TEST_CASE("import: the index expressions of to found between their brackets") {
  auto found = FindImportIndexExpressions("module.a[each.key].instance.web[0]");
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].text == "each.key");
  CHECK((*found)[0].begin == 9);
  found = FindImportIndexExpressions("instance.web[\"a]b\"]");
  REQUIRE(found);
  CHECK(found->empty());  // a quoted key, with a bracket inside
  found = FindImportIndexExpressions("instance.web[each.value[\"k\"]]");
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].text == "each.value[\"k\"]");
  CHECK_FALSE(FindImportIndexExpressions("instance.web[each.key"));
  std::string error;
  auto text = SubstituteImportIndexes("instance.web[each.key]",
                                      *FindImportIndexExpressions("instance.web[each.key]"),
                                      {Value("a\"b")}, error);
  REQUIRE(text);
  CHECK(*text == "instance.web[\"a\\\"b\"]");
  CHECK_FALSE(SubstituteImportIndexes("instance.web[each.key]",
                                      *FindImportIndexExpressions("instance.web[each.key]"),
                                      {Value(-1)}, error));
  CHECK(error.find("a string or a whole number") != std::string::npos);
}

}  // namespace imports_test
