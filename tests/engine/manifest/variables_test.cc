// The variables stage alone: declarations and values in, values and
// diagnostics out, with no file, YAML document or environment behind it.
#include "engine/manifest/variables.h"

#include <catch2/catch.hpp>

namespace variables_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

KeyLocator Keys() {
  return [](const std::string& key) {
    SourceLocation l;
    l.file = "vars.yaml";
    l.line = key == "name" ? 2 : key == "type" ? 3 : key == "default" ? 4 : 5;
    l.column = 3;
    return l;
  };
}

VariableDecl Decl(const std::string& name, const std::string& type, std::optional<Value> def,
                  bool sensitive = false) {
  VariableDecl d;
  d.name = name;
  d.type = type;
  d.value = std::move(def);
  d.sensitive = sensitive;
  d.location = {"vars.yaml", 7, 9, 0};
  return d;
}

const Diagnostic* Find(const std::vector<Diagnostic>& diags, const std::string& code) {
  for (const auto& d : diags) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

const Diagnostic* WithSummary(const std::vector<Diagnostic>& diags, const std::string& summary) {
  for (const auto& d : diags) {
    if (d.summary == summary) return &d;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("variable text is read as the declared type") {
  CHECK(ParseVariableText("3", "number") == Value(3));
  CHECK(ParseVariableText("2.5", "number") == Value(2.5));
  CHECK_FALSE(ParseVariableText("three", "number"));
  CHECK(ParseVariableText("true", "bool") == Value(true));
  CHECK_FALSE(ParseVariableText("yes", "bool"));
  CHECK(ParseVariableText("007", "string") == Value("007"));
  CHECK(ParseVariableText("[a, 2]", "list") == Value::array({"a", 2}));
  CHECK(ParseVariableText("{size: 2}", "map") == Value{{"size", 2}});
  CHECK_FALSE(ParseVariableText("{size: 2}", "list"));
  CHECK_FALSE(ParseVariableText("[unclosed", "list"));
  CHECK(ParseVariableText("[unclosed", "any") == Value("[unclosed"));
}

TEST_CASE("a variable declaration is checked key by key, each problem where it is") {
  std::vector<Diagnostic> diags;
  VariableDecl ok = ParseVariableDecl(
      "size", Value{{"type", "number"}, {"default", 2}, {"sensitive", true}}, Keys(), diags);
  CHECK(diags.empty());
  CHECK(ok.type == "number");
  CHECK(ok.sensitive);
  CHECK(ok.value == Value(2));
  CHECK(ok.location.line == 2);

  VariableDecl bad_type =
      ParseVariableDecl("x", Value{{"type", "integer"}, {"default", 2}}, Keys(), diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "invalid_value");
  CHECK(diags[0].location.line == 3);
  CHECK(diags[0].summary.find("string, number, bool, list, map, any") != std::string::npos);
  // Reported once: the default is not also "missing".
  REQUIRE(bad_type.value.has_value());
  CHECK(bad_type.value->is_null());

  diags.clear();
  VariableDecl bad_default = ParseVariableDecl(
      "x", Value{{"type", "bool"}, {"default", "no"}, {"sensitive", "yes"}}, Keys(), diags);
  REQUIRE(diags.size() == 2);
  CHECK(Find(diags, "wrong_type") != nullptr);
  CHECK(diags[0].summary == "sensitive must be true or false, not a string");
  CHECK(diags[1].summary == "default of variable \"x\" must be a boolean, not a string");
  CHECK(diags[1].location.line == 4);
  CHECK(bad_default.value->is_null());
}

TEST_CASE("variable values follow the precedence default, environment, files, --var, saved plan") {
  std::map<std::string, VariableDecl> decls = {{"a", Decl("a", "number", Value(1))},
                                               {"b", Decl("b", "number", Value(1))},
                                               {"c", Decl("c", "number", Value(1))},
                                               {"d", Decl("d", "number", Value(1))},
                                               {"e", Decl("e", "number", Value(1))}};
  VariableSources src;
  src.getenv = [](const char* name) -> const char* {
    std::string n = name;
    return n == "CAIRN_VAR_b" || n == "CAIRN_VAR_c" || n == "CAIRN_VAR_d" || n == "CAIRN_VAR_e"
               ? "2"
               : nullptr;
  };
  src.file_entries = {{"c", Value(3), {}, {}}, {"d", Value(3), {}, {}}, {"e", Value(3), {}, {}}};
  src.vars = {{"d", "4"}, {"e", "4"}};
  src.plan_vars = {{"e", Value(5)}};
  VariableValues v = ResolveVariableValues(decls, src);
  CHECK(v.values.at("a") == Value(1));
  CHECK(v.values.at("b") == Value(2));
  CHECK(v.values.at("c") == Value(3));
  CHECK(v.values.at("d") == Value(4));
  CHECK(v.values.at("e") == Value(5));
  // The saved plan's value won over the environment's, which is said.
  REQUIRE(v.diagnostics.size() == 1);
  CHECK(v.diagnostics[0].code == "variable_not_used");
  CHECK(v.diagnostics[0].severity == Severity::kWarning);
}

TEST_CASE("every bad variable value is reported at once, where it was given") {
  std::map<std::string, VariableDecl> decls = {
      {"region", Decl("region", "string", std::nullopt)},
      {"size", Decl("size", "number", Value(1))},
      {"token", Decl("token", "string", Value("s3cr3t"), /*sensitive=*/true)}};
  VariableSources src;
  src.getenv = [](const char* name) -> const char* {
    return std::string(name) == "CAIRN_VAR_size" ? "big" : nullptr;
  };
  SourceLocation key_at{"dev.yaml", 1, 1, 0}, value_at{"dev.yaml", 2, 7, 0};
  src.file_entries = {{"regoin", Value("eu"), key_at, value_at},
                      {"size", Value::array({1}), key_at, value_at}};
  src.vars = {{"nope", "1"}};
  src.plan_vars = {{"size", Value("not a number")}};
  VariableValues v = ResolveVariableValues(decls, src);

  const Diagnostic* env = Find(v.diagnostics, "invalid_variable_value");
  REQUIRE(env);
  CHECK(env->summary == "CAIRN_VAR_size is not a number as variable \"size\" requires");
  CHECK(env->location.line == 7);  // the declaration: the environment has no line
  int invalid = 0, unknown = 0;
  for (const auto& d : v.diagnostics) {
    if (d.code == "invalid_variable_value") ++invalid;
    if (d.code == "unknown_variable") ++unknown;
  }
  const Diagnostic* typo =
      WithSummary(v.diagnostics, "variable file sets undeclared variable \"regoin\"");
  REQUIRE(typo);
  CHECK(typo->severity == Severity::kWarning);
  CHECK(typo->detail.find("region") != std::string::npos);
  CHECK(typo->location.line == 1);
  const Diagnostic* list =
      WithSummary(v.diagnostics, "value of variable \"size\" must be a number, not a list");
  REQUIRE(list);
  CHECK(list->location.line == 2);
  CHECK(invalid == 2);  // the environment's and the file's
  CHECK(unknown == 3);  // the file's, --var's and the saved plan's
  const Diagnostic* missing = Find(v.diagnostics, "missing_variable");
  REQUIRE(missing);
  CHECK(missing->summary == "variable \"region\" has no value");
  CHECK(v.values.count("region") == 0);
  CHECK(v.values.at("size") == Value(1));
  CHECK(v.sensitive == std::vector<std::string>{"token"});

  // Loading settings only, a variable without a value is no error yet.
  src = {};
  src.settings_only = true;
  CHECK(ResolveVariableValues(decls, src).diagnostics.empty());
}

}  // namespace variables_test
