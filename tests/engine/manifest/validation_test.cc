// Variable validation (Terraform's `validation` blocks): checked at load,
// before any API call, for stack and module variables; a failure points at
// where the value came from and names the condition, never the value.
#include <catch2/catch.hpp>

#include "base/env.h"
#include "engine/manifest/loader.h"

namespace validation_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

LoadOptions Options() {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

std::string Diags(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + " | " + d.detail +
           "\n";
  }
  return out;
}

const char* kEnv = R"(kind: variable
name: env
type: string
default: dev
validation:
  - condition: '${contains(["dev", "prod"], var.env)}'
    error_message: env must be dev or prod.
  - condition: ${length(var.env) <= 4}
    error_message: env is at most four letters.
)";

}  // namespace

TEST_CASE("validation: a value that passes loads") {
  LoadOptions o = Options();
  o.vars["env"] = "prod";
  auto r = LoadStackFromText({{"main.yaml", kEnv}}, o);
  INFO(Diags(r));
  CHECK(r.ok());
}

TEST_CASE("validation: a failure names the message, the condition and where the value came from") {
  LoadOptions o = Options();
  o.vars["env"] = "staging";
  auto r = LoadStackFromText({{"main.yaml", kEnv}}, o);
  std::string d = Diags(r);
  INFO(d);
  REQUIRE(r.diagnostics.size() == 2);  // every failing condition, at once
  CHECK(r.diagnostics[0].code == "invalid_variable_value");
  CHECK(r.diagnostics[0].summary == "invalid value for variable \"env\": env must be dev or prod.");
  CHECK(r.diagnostics[0].detail ==
        "the value (from --var env) fails the validation at main.yaml:6:16");
  CHECK(r.diagnostics[1].summary ==
        "invalid value for variable \"env\": env is at most four letters.");
  CHECK(r.diagnostics[1].detail.find("main.yaml:8:16") != std::string::npos);
}

TEST_CASE("validation: a --var-file value is pointed at, and a default too") {
  MemEnv env;
  env.AddFile("stack/main.yaml", kEnv);
  env.AddFile("prod.yaml", "env: qa\n");
  LoadOptions o = Options();
  o.env = &env;
  o.paths = {"stack"};
  o.var_files = {"prod.yaml"};
  auto r = LoadStack(o);
  INFO(Diags(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].location.file == "prod.yaml");
  CHECK(r.diagnostics[0].location.line == 1);
  CHECK(r.diagnostics[0].location.column == 6);
  CHECK(r.diagnostics[0].detail.find("the --var-file prod.yaml") != std::string::npos);

  std::string bad_default = kEnv;
  bad_default.replace(bad_default.find("default: dev"), 12, "default: test");
  auto d = LoadStackFromText({{"main.yaml", bad_default}}, Options());
  REQUIRE(d.diagnostics.size() == 1);
  CHECK(d.diagnostics[0].location.line == 4);  // the default
  CHECK(d.diagnostics[0].detail.find("from its default") != std::string::npos);
}

TEST_CASE("validation: a module's variables are checked against their inputs") {
  MemEnv env;
  env.AddFile("stack/main.yaml", "kind: module\nname: app\nsource: ./mod\ninputs: {size: 500}\n");
  env.AddFile("stack/mod/main.yaml",
              "kind: variable\nname: size\ntype: number\nvalidation:\n"
              "  - condition: ${var.size >= 10 && var.size <= 100}\n"
              "    error_message: size must be 10 to 100 GiB.\n");
  LoadOptions o = Options();
  o.env = &env;
  o.paths = {"stack"};
  auto r = LoadStack(o);
  INFO(Diags(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].summary ==
        "invalid value for variable \"size\" of module app: size must be 10 to 100 GiB.");
  CHECK(r.diagnostics[0].location.file == "stack/main.yaml");
  CHECK(r.diagnostics[0].location.line == 4);  // the module's input
  CHECK(r.diagnostics[0].detail.find("from the input of module app") != std::string::npos);
}

TEST_CASE("validation: a sensitive value is never shown, and mistakes in a validation are named") {
  const char* text = R"(kind: variable
name: pw
sensitive: true
validation:
  - condition: ${length(var.pw) >= 12}
    error_message: 'the password ${var.pw} is too short'
  - condition: ${var.pw}
    error_message: not a bool
  - condition: ${lenght(var.pw) > 1}
    error_message: misspelt
  - {condition: '${true}'}
)";
  LoadOptions o = Options();
  o.vars["pw"] = "hunter2";
  auto r = LoadStackFromText({{"main.yaml", text}}, o);
  std::string d = Diags(r);
  INFO(d);
  CHECK(d.find("hunter2") == std::string::npos);
  CHECK(d.find("invalid value for variable \"pw\": (the error message holds a sensitive value)") !=
        std::string::npos);
  CHECK(d.find("invalid_condition: a condition must be true or false, not a string") !=
        std::string::npos);
  CHECK(d.find("main.yaml:9:18: unknown_function") != std::string::npos);
  CHECK(d.find("main.yaml:11:5: missing_field: a validation needs condition and error_message") !=
        std::string::npos);
}

}  // namespace validation_test
