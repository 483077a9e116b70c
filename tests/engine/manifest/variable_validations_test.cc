// The variable-validations stage alone: a variable document read by the
// documents stage, an evaluator standing in for the loader's ("${ok}" is
// true, "${no}" false, "${later}" known only after apply, "${bad}" fails,
// a message "${secret}" reads a sensitive value); what is reported where.
#include "engine/manifest/variable_validations.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace variable_validations_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

struct Case : StageDocs {
  std::vector<std::string> asked;  // where, in order
  ValidatedVariable variable;
  ValueOrigin origin{"--var size", {"m.yaml", 1, 1, 1}};

  explicit Case(const std::string& yaml) : StageDocs(yaml) {
    variable.doc = docs[0];
    variable.name = docs[0]->name;
    variable.location = {"m.yaml", 2, 7, 4};
    variable.has_value = true;
  }

  void Check() {
    auto evaluate = [this](const Value& v, const YamlNode&, const char* where) {
      asked.push_back(where);
      ValidationField f;
      f.value = v;
      if (v == "${ok}") f.value = true;
      if (v == "${no}") f.value = false;
      if (v == "${later}") f.value = "${network.main.id}";
      if (v == "${bad}") {
        AddError(diags, "eval_error", "cannot evaluate", {"m.yaml", 99, 1, 1});
        f.failed = true;
      }
      f.sensitive = v == "${secret}";
      return f;
    };
    CheckVariableValidations(variable, evaluate, diags);
  }
};

const char* kVariable = "kind: variable\nname: size\nvalidation:\n";

TEST_CASE("variable validations: a failed one where the value came from") {
  Case c(std::string(kVariable) +
         "  - {condition: '${ok}', error_message: fine}\n"
         "  - {condition: '${later}', error_message: later}\n"
         "  - {condition: '${no}', error_message: too big}\n");
  c.variable.origin = &c.origin;
  c.variable.module = "app[0]";
  c.Check();
  CHECK(c.asked == std::vector<std::string>{"a validation condition", "a validation condition",
                                            "a validation condition", "an error message"});
  REQUIRE(c.diags.size() == 1);
  const Diagnostic& d = c.diags[0];
  CHECK(d.code == "invalid_variable_value");
  CHECK(d.summary == "invalid value for variable \"size\" of module app[0]: too big");
  CHECK(d.location.line == 1);
  CHECK(d.detail == "the value (from --var size) fails the validation at m.yaml:6:17");
}

TEST_CASE("variable validations: what is never shown") {
  SECTION("a message built from a sensitive value") {
    Case c(std::string(kVariable) + "  - {condition: '${no}', error_message: '${secret}'}\n");
    c.Check();
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].summary ==
          "invalid value for variable \"size\": (the error message holds a sensitive value)");
    // No origin: the variable's name, and "its source".
    CHECK(c.diags[0].location.line == 2);
    CHECK(c.diags[0].detail.rfind("the value (from its source) fails", 0) == 0);
  }
  SECTION("a sensitive variable's default") {
    Case c(std::string(kVariable) + "  - {condition: '${no}', error_message: m}\n");
    ValueOrigin def{"its default", {"m.yaml", 8, 10, 2}};
    c.variable.origin = &def;
    c.variable.sensitive = true;
    c.Check();
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].location.line == 2);
    c.variable.sensitive = false;
    c.Check();
    REQUIRE(c.diags.size() == 2);
    CHECK(c.diags[1].location.line == 8);
  }
  SECTION("a message that could not be evaluated") {
    Case c(std::string(kVariable) + "  - {condition: '${no}', error_message: '${later}'}\n");
    c.Check();
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].summary ==
          "invalid value for variable \"size\": (the error message could not be evaluated)");
  }
}

TEST_CASE("variable validations: each mistake where it is") {
  Case c(std::string(kVariable) +
         "  - {condition: '${ok}'}\n"
         "  - {condition: '${ok}', error_message: m, eror: 1}\n"
         "  - {condition: 3, error_message: m}\n"
         "  - {condition: '${bad}', error_message: m}\n");
  c.Check();
  REQUIRE(c.diags.size() == 4);
  CheckAt(c.diags[0], "missing_field", 4, 5);
  CheckAt(c.diags[1], "unknown_field", 5, 44);
  CheckAt(c.diags[2], "invalid_condition", 6, 17);
  CHECK(c.diags[2].summary == "a condition must be true or false, not an integer");
  CHECK(c.diags[3].code == "eval_error");
  CHECK(c.asked.size() == 3);
}

TEST_CASE("variable validations: without a value only the shape is checked") {
  Case c(std::string(kVariable) + "  - {condition: '${no}', error_message: m}\n  - 3\n");
  c.variable.has_value = false;
  c.Check();
  CHECK(c.asked.empty());
  REQUIRE(c.diags.size() == 1);
  CheckAt(c.diags[0], "missing_field", 5, 5);
  Case list("kind: variable\nname: size\nvalidation: {condition: x}\n");
  list.Check();
  REQUIRE(list.diags.size() == 1);
  CheckAt(list.diags[0], "wrong_type", 3, 13);
}

}  // namespace variable_validations_test
