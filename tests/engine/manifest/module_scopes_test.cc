// The module scopes stage alone: a tree of scopes built by hand, module
// documents read by the documents stage, files in a MemEnv; what each
// decision returns and reports.
#include "engine/manifest/module_scopes.h"

#include <catch2/catch.hpp>

#include "base/env.h"
#include "tests/engine/manifest/support/stage_docs.h"

namespace module_scopes_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

// The stack calls app (count 2); app[1] calls db (no count); the stack
// also calls off (count 0: no instance) and bad (reported broken).
ModuleScopes Tree() {
  ModuleScopes scopes(1);
  scopes[0].dir = "/stack";
  scopes.push_back(ChildScope(scopes, 0, "app", 0, "/app", 1));
  scopes.push_back(ChildScope(scopes, 0, "app", 1, "/app", 1));
  scopes.push_back(ChildScope(scopes, 2, "db", {}, "/db", 2));
  ModuleCall& app = scopes[0].calls["app"];
  app.mode = ResourceGroup::Mode::kCount;
  app.instances = {{0, 1}, {1, 2}};
  scopes[2].calls["db"].instances = {{std::monostate{}, 3}};
  scopes[0].calls["off"].mode = ResourceGroup::Mode::kCount;
  scopes[0].calls["bad"].broken = true;
  scopes[3].outputs["id"] = 0;
  scopes[3].outputs["name"] = 1;
  return scopes;
}

std::string Message(const std::variant<size_t, std::string>& found) {
  REQUIRE(std::holds_alternative<std::string>(found));
  return std::get<std::string>(found);
}

TEST_CASE("module scopes: a path names a scope from the stack down") {
  ModuleScopes scopes = Tree();
  CHECK(scopes[3].prefix == "module.app[1].module.db.");
  CHECK(scopes[3].parent == 2);
  CHECK(ModuleScopeName(scopes, 3) == "app[1].db");
  CHECK(ModuleScopeName(scopes, 0).empty());
  auto found = FindModuleScope(scopes, {{"app", 1}, {"db", {}}});
  REQUIRE(std::holds_alternative<size_t>(found));
  CHECK(std::get<size_t>(found) == 3);
  CHECK(std::get<size_t>(FindModuleScope(scopes, {})) == 0);
  CHECK(std::get<size_t>(FindModuleScope(scopes, {{"app", 0}})) == 1);
}

TEST_CASE("module scopes: why a path names no scope") {
  ModuleScopes scopes = Tree();
  CHECK(Message(FindModuleScope(scopes, {{"app", {}}})) ==
        "module.app has count; name one instance (module.app[0].OUTPUT)");
  CHECK(Message(FindModuleScope(scopes, {{"app", 5}})) ==
        "module.app[5] does not exist: module.app has 2 instances");
  CHECK(Message(FindModuleScope(scopes, {{"app", 1}, {"db", 0}})) ==
        "module.app[1].module.db has neither count nor for_each; refer to it without an index");
  const std::string undeclared = Message(FindModuleScope(scopes, {{"apq", 0}}));
  CHECK(undeclared.rfind("reference to undeclared module module.apq; ", 0) == 0);
  CHECK(undeclared.find("app") != std::string::npos);
  CHECK(Message(FindModuleScope(scopes, {{"app", 0}, {"db", {}}}))
            .rfind("reference to undeclared module module.app[0].module.db", 0) == 0);
  // A broken call was reported where it is declared: nothing more to say.
  CHECK(Message(FindModuleScope(scopes, {{"bad", {}}})).empty());
}

TEST_CASE("module scopes: every instance path and every call with none") {
  std::vector<std::string> paths;
  for (const auto& path : ModuleInstancePaths(Tree())) paths.push_back(ModulePathPrefix(path));
  CHECK(paths == std::vector<std::string>{"module.app[0].", "module.app[1].",
                                          "module.app[1].module.db.", "module.off."});
}

struct SourceCase : StageDocs {
  MemEnv env;
  ModuleScopes scopes = ModuleScopes(1);
  explicit SourceCase(const std::string& yaml) : StageDocs(yaml) {
    env.AddFile("modules/app/main.yaml", "kind: variable\nname: x\n");
    scopes[0].dir = env.Canonical(".");
  }
  std::optional<ModuleSource> Check(size_t s = 0) {
    return CheckModuleSource(scopes, s, parsed.docs[0], env, diags);
  }
};

TEST_CASE("module scopes: a source that may be read") {
  SourceCase c("kind: module\nname: app\nsource: ./modules/app\n");
  auto source = c.Check();
  REQUIRE(source);
  CHECK(c.diags.empty());
  CHECK(source->dir == "modules/app");
  CHECK(source->canonical == c.env.Canonical("modules/app"));
  CHECK(source->location.line == 3);
  CHECK(source->location.column == 9);
}

TEST_CASE("module scopes: each problem of a source, where it is") {
  SECTION("missing") {
    SourceCase c("kind: module\nname: app\n");
    CHECK_FALSE(c.Check());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "missing_field", 1, 7);
  }
  SECTION("not a string") {
    SourceCase c("kind: module\nname: app\nsource: 3\n");
    CHECK_FALSE(c.Check());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "wrong_type", 3, 9);
  }
  SECTION("not a directory") {
    SourceCase c("kind: module\nname: app\nsource: ./modules/web\n");
    CHECK_FALSE(c.Check());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "module_not_found", 3, 9);
    CHECK(c.diags[0].summary == "module source \"./modules/web\" is not a directory");
  }
  SECTION("the stack itself") {
    SourceCase c("kind: module\nname: app\nsource: ./modules/app\n");
    c.scopes[0].dir = c.env.Canonical("modules/app");
    CHECK_FALSE(c.Check());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "module_cycle", 3, 9);
    CHECK(c.diags[0].summary ==
          "module \"app\" uses itself: source \"./modules/app\" is the stack, which declares it");
  }
  SECTION("a module above, which leads here") {
    SourceCase c("kind: module\nname: app\nsource: ./modules/app\n");
    c.scopes.push_back(ChildScope(c.scopes, 0, "web", {}, c.env.Canonical("modules/app"), 0));
    c.scopes.push_back(ChildScope(c.scopes, 1, "db", {}, "/elsewhere", 0));
    CHECK_FALSE(c.Check(2));
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].code == "module_cycle");
    CHECK(c.diags[0].summary ==
          "module \"app\" uses itself: source \"./modules/app\" is module web, which leads here");
  }
  SECTION("too deep") {
    SourceCase c("kind: module\nname: app\nsource: ./modules/app\n");
    for (size_t depth = 0; depth < kMaxModuleDepth; ++depth) {
      c.scopes.push_back(ChildScope(c.scopes, depth, "m", {}, "/m" + std::to_string(depth), 0));
    }
    CHECK(c.Check(kMaxModuleDepth - 1));
    CHECK_FALSE(c.Check(kMaxModuleDepth));
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "too_many_modules", 3, 9);
  }
}

DeclaredVariable Variable(const std::string& name, const std::string& type,
                          std::optional<Value> value, bool sensitive = false) {
  DeclaredVariable v;
  v.name = name;
  v.type = type;
  v.value = std::move(value);
  v.sensitive = sensitive;
  v.location = {"vars.yaml", 4, 7, 1};
  v.default_location = {"vars.yaml", 5, 10, 1};
  return v;
}

TEST_CASE("module scopes: inputs give variables their values, defaults the others") {
  StageDocs d(
      "kind: module\nname: app\nsource: ./m\ninputs:\n"
      "  size: 3\n"
      "  pw: hunter2\n"
      "  ref: ${network.main.id}\n");
  std::map<std::string, DeclaredVariable> vars;
  vars.emplace("size", Variable("size", "number", Value(1)));
  vars.emplace("pw", Variable("pw", "string", std::nullopt, true));
  vars.emplace("ref", Variable("ref", "number", std::nullopt));
  vars.emplace("zone", Variable("zone", "string", Value("a${b}"), true));
  const ManifestDocument& call = d.parsed.docs[0];
  ModuleInputs in = ResolveModuleInputs(vars, call.value["inputs"],
                                        {{"pw", "sensitive variable \"s\""}}, call, "app[0]");
  CHECK(in.diagnostics.empty());
  CHECK(in.values.at("size") == 3);
  CHECK(in.values.at("pw") == "hunter2");
  // An expression is checked against the type when it is evaluated.
  CHECK(in.values.at("ref") == "${network.main.id}");
  // A default is a value, never an expression.
  CHECK(in.values.at("zone") == "a$${b}");
  CHECK(in.secrets == std::vector<std::string>{"hunter2", "a${b}"});
  CHECK(in.sensitive_inputs ==
        std::map<std::string, std::string>{{"pw", "sensitive variable \"s\""}});
  CHECK(in.origins.at("size").what == "the input of module app[0]");
  CHECK(in.origins.at("size").location.line == 5);
  CHECK(in.origins.at("size").location.column == 9);
  CHECK(in.origins.at("zone").what == "its default");
  CHECK(in.origins.at("zone").location.line == 5);
}

TEST_CASE("module scopes: every mistake of inputs at once and where it is") {
  StageDocs d(
      "kind: module\nname: app\nsource: ./m\ninputs:\n"
      "  size: three\n"
      "  regoin: eu\n");
  std::map<std::string, DeclaredVariable> vars;
  vars.emplace("size", Variable("size", "number", Value(1)));
  vars.emplace("region", Variable("region", "string", std::nullopt));
  const ManifestDocument& call = d.parsed.docs[0];
  ModuleInputs in = ResolveModuleInputs(vars, call.value["inputs"], {}, call, "app");
  REQUIRE(in.diagnostics.size() == 3);
  // In the order of the input names.
  CheckAt(in.diagnostics[0], "unknown_input", 6, 3);
  CHECK(in.diagnostics[0].detail.find("region") != std::string::npos);
  CheckAt(in.diagnostics[1], "wrong_type", 5, 9);
  CHECK(in.diagnostics[1].summary ==
        "input \"size\" of module \"app\" must be a number, not a string");
  CheckAt(in.diagnostics[2], "missing_input", 1, 7);
  CHECK(in.diagnostics[2].detail.find("vars.yaml:4:7") != std::string::npos);
  CHECK(in.values.empty());
  CHECK(in.secrets.empty());
}

Expression OutputUse(std::vector<ModuleStep> module, const std::string& attr) {
  Expression e;
  e.type = Expression::Type::kModuleOutput;
  e.target.module = std::move(module);
  e.attr = attr;
  return e;
}

TEST_CASE("module scopes: a module output use names an output of an instance") {
  StageDocs d("kind: variable\nname: x\n");
  ModuleScopes scopes = Tree();
  const SourceLocation at{"m.yaml", 7, 12, 3};
  std::vector<Diagnostic> diags;
  auto found = CheckModuleOutputUse(scopes, *d.registry, OutputUse({{"app", 1}, {"db", {}}}, "id"),
                                    at, diags);
  REQUIRE(found);
  CHECK(*found == 3);
  CHECK(diags.empty());
  CHECK_FALSE(CheckModuleOutputUse(scopes, *d.registry, OutputUse({{"app", 1}, {"db", {}}}, "nme"),
                                   at, diags));
  CHECK_FALSE(CheckModuleOutputUse(scopes, *d.registry,
                                   OutputUse({{"app", 1}, {"db", {}}}, "network"), at, diags));
  CHECK_FALSE(CheckModuleOutputUse(scopes, *d.registry, OutputUse({{"ap", 0}}, "id"), at, diags));
  CHECK_FALSE(CheckModuleOutputUse(scopes, *d.registry, OutputUse({{"bad", {}}}, "id"), at, diags));
  REQUIRE(diags.size() == 3);
  CHECK(diags[0].code == "unknown_output");
  CHECK(diags[0].summary == "module app[1].db has no output \"nme\"");
  CHECK(diags[0].detail.find("name") != std::string::npos);
  CHECK(diags[0].location.line == 7);
  CHECK(diags[0].location.column == 12);
  CHECK(diags[1].code == "module_internal_reference");
  CHECK(diags[2].code == "unknown_module");
}

}  // namespace module_scopes_test
