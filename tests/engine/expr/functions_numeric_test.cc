// Numeric functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME; the
// same examples are in OpenTofu's website/docs/language/functions/NAME.mdx),
// then Cairn's own cases for errors, integers and conversions.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_numeric_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

using testing::Run;
using testing::Show;
using testing::TableScope;

struct Case {
  const char* in;
  const char* out;
};

void CheckAll(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    INFO(c.in);
    CHECK(Show(c.in) == c.out);
  }
}

TEST_CASE("functions: numeric, Terraform's documented examples", "[expr][functions]") {
  CheckAll({
      {"abs(23)", "23"},
      {"abs(0)", "0"},
      {"abs(-12.4)", "12.4"},
      {"ceil(5)", "5"},
      {"ceil(5.1)", "6"},
      {"floor(5)", "5"},
      {"floor(4.9)", "4"},
      {"log(50, 10)", "1.6989700043360185"},
      {"log(16, 2)", "4"},
      {"max(12, 54, 3)", "54"},
      {"max([12, 54, 3]...)", "54"},
      {"min(12, 54, 3)", "3"},
      {"min([12, 54, 3]...)", "3"},
      {"parseint(\"100\", 10)", "100"},
      {"parseint(\"FF\", 16)", "255"},
      {"parseint(\"-10\", 16)", "-16"},
      {"parseint(\"1011111011101111\", 2)", "48879"},
      {"parseint(\"aA\", 62)", "656"},
      {"parseint(\"12\", 2)",
       "error: invalid_function_argument: parseint(): cannot parse \"12\" as a base 2 integer"},
      {"pow(3, 2)", "9"},
      {"pow(4, 0)", "1"},
      {"signum(-13)", "-1"},
      {"signum(0)", "0"},
      {"signum(344)", "1"},
      {"sum([10, 13, 6, 4.5])", "33.5"},
  });
}

TEST_CASE("functions: numeric, integers stay exact and errors are named", "[expr][functions]") {
  CheckAll({
      {"abs(-9223372036854775807)", "9223372036854775807"},
      {"abs(-9223372036854775807 - 1)",
       "error: invalid_function_argument: abs(): the absolute value of -9223372036854775808 does "
       "not fit a 64-bit integer"},
      {"ceil(-1.5)", "-1"},
      {"floor(-1.5)", "-2"},
      {"max(1, 2.5, \"3\")", "3"},
      {"max(-1.5, -2)", "-1.5"},
      {"min(\"7\", 10)", "7"},
      {"pow(2, 62)", "4611686018427387904"},
      {"pow(2, 0.5)", "1.4142135623730951"},
      {"pow(2, -1)", "0.5"},
      {"pow(0, -1)", "error: invalid_function_argument: pow(): the result is not a finite number"},
      {"signum(-0.5)", "-1"},
      {"parseint(\"zz\", 36)", "1295"},
      {"parseint(\"ZZ\", 36)", "1295"},
      {"parseint(\"Zz\", 62)", "3817"},
      {"parseint(\"+7\", 8)", "7"},
      {"parseint(\"7fffffffffffffff\", 16)", "9223372036854775807"},
      {"parseint(\"-8000000000000000\", 16)", "-9223372036854775808"},
      {"parseint(\"8000000000000000\", 16)",
       "error: invalid_function_argument: parseint(): \"8000000000000000\" in base 16 does not "
       "fit a 64-bit integer"},
      {"parseint(\"\", 10)",
       "error: invalid_function_argument: parseint(): cannot parse \"\" as a base 10 integer"},
      {"parseint(\"10\", 63)",
       "error: invalid_function_argument: parseint(): the base must be a whole number from 2 to "
       "62, not 63"},
      {"parseint(10, 10)",
       "error: invalid_function_argument: parseint(): the first argument must be a string, not a "
       "number"},
      {"sum([1, 2, 3])", "6"},
      {"sum(toset([1, 2]))", "3"},
      {"sum([\"1\", 2])", "3"},
      {"sum([])", "error: invalid_function_argument: sum(): cannot sum an empty list"},
      {"sum([9223372036854775807, 1])",
       "error: invalid_function_argument: sum(): the sum does not fit a 64-bit integer"},
      {"sum([\"a\"])",
       "error: invalid_function_argument: sum(): the first argument must be a number, not the "
       "string \"a\""},
      {"abs(\"-3\")", "3"},
      {"abs(\"x\")",
       "error: invalid_function_argument: abs(): the first argument must be a number, not the "
       "string \"x\""},
  });
}

TEST_CASE("functions: numeric, unknown and sensitive arguments", "[expr][functions]") {
  TableScope s;
  s.vars["u"] = Value::Unknown();
  s.vars["n"] = Value::Int(-4).MarkedSensitive("var.n");
  CHECK(Run("abs(var.u)", s).value.is_unknown());
  CHECK(Run("max(1, var.u)", s).value.is_unknown());
  CHECK(Run("sum([1, var.u])", s).value.is_unknown());
  auto o = Run("abs(var.n)", s);
  REQUIRE(o.ok());
  CHECK(o.value.sensitive());
  CHECK(o.value.as_number().i == 4);
  CHECK(Show("max(var.n, 1)", s) == "sensitive(1)");
}

TEST_CASE("functions: numeric, the caret goes under the wrong argument", "[expr][functions]") {
  auto o = Run("pow(2, \"x\")");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].code == "invalid_function_argument");
  CHECK(o.errors[0].begin == 7);
  CHECK(o.errors[0].end == 10);
  auto wrong = Run("ceil([1])");
  REQUIRE(wrong.errors.size() == 1);
  CHECK(wrong.errors[0].begin == 5);
  CHECK(wrong.errors[0].end == 8);
  auto count = Run("pow(2)");
  REQUIRE(count.errors.size() == 1);
  CHECK(count.errors[0].code == "wrong_argument_count");
  CHECK(count.errors[0].detail == "usage: pow(base, exponent)");
  CHECK(Show("max()").rfind("error: wrong_argument_count: max() takes at least 1 argument", 0) ==
        0);
}

}  // namespace
}  // namespace functions_numeric_test
}  // namespace cairn::expr
