// String functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME; the
// same examples are in OpenTofu's website/docs/language/functions/NAME.mdx),
// then Cairn's own cases: format's verbs and flags, regular expressions,
// Unicode, errors, and unknown and sensitive arguments.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_string_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

using testing::Run;
using testing::Show;
using testing::TableScope;

struct Case {
  const char* in;
  const char* out;
};

void CheckAll(std::initializer_list<Case> cases, TableScope* scope = nullptr) {
  for (const Case& c : cases) {
    INFO(c.in);
    TableScope fresh;
    CHECK(Show(c.in, scope ? *scope : fresh) == c.out);
  }
}

TEST_CASE("functions: string, Terraform's documented examples", "[expr][functions]") {
  TableScope s;
  s.vars["name"] = Value::String("Valentina");
  CheckAll(
      {
          {R"~(chomp("hello\n"))~", R"~("hello")~"},
          {R"~(chomp("hello\r\n"))~", R"~("hello")~"},
          {R"~(chomp("hello\n\n"))~", R"~("hello")~"},
          {R"~(endswith("hello world", "world"))~", "true"},
          {R"~(endswith("hello world", "hello"))~", "false"},
          {R"~(format("Hello, %s!", "Ander"))~", R"~("Hello, Ander!")~"},
          {R"~(format("There are %d lights", 4))~", R"~("There are 4 lights")~"},
          {R"~(format("Hello, %s!", var.name))~", R"~("Hello, Valentina!")~"},
          {R"~("Hello, ${var.name}!")~", R"~("Hello, Valentina!")~"},
          {R"~(format("%#v", "hello"))~", R"~("\"hello\"")~"},
          {R"~(format("%#v", true))~", R"~("true")~"},
          {R"~(format("%#v", 1))~", R"~("1")~"},
          {R"~(format("%#v", {a = 1}))~", R"~("{\"a\":1}")~"},
          {R"~(format("%#v", [true]))~", R"~("[true]")~"},
          {R"~(format("%#v", null))~", R"~("null")~"},
          {R"~(formatlist("Hello, %s!", ["Valentina", "Ander", "Olivia", "Sam"]))~",
           R"~(["Hello, Valentina!", "Hello, Ander!", "Hello, Olivia!", "Hello, Sam!"])~"},
          {R"~(formatlist("%s, %s!", "Salutations", ["Valentina", "Ander", "Olivia", "Sam"]))~",
           R"~(["Salutations, Valentina!", "Salutations, Ander!", "Salutations, Olivia!", )~"
           R"~("Salutations, Sam!"])~"},
          {R"~("  items: ${indent(2, "[\n  foo,\n  bar,\n]\n")}")~",
           R"~("  items: [\n    foo,\n    bar,\n  ]\n  ")~"},
          {R"~(join("-", ["foo", "bar", "baz"]))~", R"~("foo-bar-baz")~"},
          {R"~(join(", ", ["foo", "bar", "baz"]))~", R"~("foo, bar, baz")~"},
          {R"~(join(", ", ["foo"]))~", R"~("foo")~"},
          {R"~(lower("HELLO"))~", R"~("hello")~"},
          {R"~(lower("АЛЛО!"))~", R"~("алло!")~"},
          {R"~(regex("[a-z]+", "53453453.345345aaabbbccc23454"))~", R"~("aaabbbccc")~"},
          {R"~(regex("(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)", "2019-02-01"))~",
           R"~(["2019", "02", "01"])~"},
          {R"~(regex("^(?:(?P<scheme>[^:/?#]+):)?(?://(?P<authority>[^/?#]*))?", )~"
           R"~("https://example.com/docs/"))~",
           R"~({authority = "example.com", scheme = "https"})~"},
          {R"~(regex("[a-z]+", "53453453.34534523454"))~",
           "error: invalid_function_argument: regex(): the pattern did not match any part of "
           "the given string"},
          {R"~(regexall("[a-z]+", "1234abcd5678efgh9"))~", R"~(["abcd", "efgh"])~"},
          {R"~(length(regexall("[a-z]+", "1234abcd5678efgh9")))~", "2"},
          {R"~(length(regexall("[a-z]+", "123456789")) > 0)~", "false"},
          {R"~(replace("1 + 2 + 3", "+", "-"))~", R"~("1 - 2 - 3")~"},
          {R"~(replace("hello world", "/w.*d/", "everybody"))~", R"~("hello everybody")~"},
          {R"~(split(",", "foo,bar,baz"))~", R"~(["foo", "bar", "baz"])~"},
          {R"~(split(",", "foo"))~", R"~(["foo"])~"},
          {R"~(split(",", ""))~", R"~([""])~"},
          {R"~(startswith("hello world", "hello"))~", "true"},
          {R"~(startswith("hello world", "world"))~", "false"},
          {R"~(strcontains("hello world", "wor"))~", "true"},
          {R"~(strcontains("hello world", "wod"))~", "false"},
          {R"~(strrev("hello"))~", R"~("olleh")~"},
          {R"~(strrev("a ☃"))~", R"~("☃ a")~"},
          {R"~(substr("hello world", 1, 4))~", R"~("ello")~"},
          {R"~(substr("🤔🤷", 0, 1))~", R"~("🤔")~"},
          {R"~(substr("hello world", -5, -1))~", R"~("world")~"},
          {R"~(substr("hello world", 6, 10))~", R"~("world")~"},
          {R"~(title("hello world"))~", R"~("Hello World")~"},
          {R"~(trim("?!hello?!", "!?"))~", R"~("hello")~"},
          {R"~(trim("foobar", "far"))~", R"~("oob")~"},
          {R"~(trim("   hello! world.!  ", "! "))~", R"~("hello! world.")~"},
          {R"~(trimprefix("helloworld", "hello"))~", R"~("world")~"},
          {R"~(trimprefix("helloworld", "cat"))~", R"~("helloworld")~"},
          {R"~(trimspace("  hello\n\n"))~", R"~("hello")~"},
          {R"~(trimsuffix("helloworld", "world"))~", R"~("hello")~"},
          {R"~(upper("hello"))~", R"~("HELLO")~"},
          {R"~(upper("алло!"))~", R"~("АЛЛО!")~"},
      },
      &s);
}

TEST_CASE("functions: format's verbs, flags, widths and argument indexes", "[expr][functions]") {
  CheckAll({
      {R"~(format("%d", 42))~", R"~("42")~"},
      {R"~(format("%5d|%-5d|%05d", 42, 42, 42))~", R"~("   42|42   |00042")~"},
      {R"~(format("%+d % d %+d", 5, 5, -5))~", R"~("+5  5 -5")~"},
      {R"~(format("%.2f", 3.14159))~", R"~("3.14")~"},
      {R"~(format("%f", 1.5))~", R"~("1.500000")~"},
      {R"~(format("%9.2f|", 3.14159))~", R"~("     3.14|")~"},
      {R"~(format("%-9.2f|", -3.14159))~", R"~("-3.14    |")~"},
      {R"~(format("%09.2f", -3.14159))~", R"~("-00003.14")~"},
      {R"~(format("%e", 123456.789))~", R"~("1.234568e+05")~"},
      {R"~(format("%E", 0.000123))~", R"~("1.230000E-04")~"},
      {R"~(format("%g %g %g", 100000, 1234567, 0.0001))~", R"~("100000 1.234567e+06 0.0001")~"},
      {R"~(format("%g", 0.00001))~", R"~("1e-05")~"},
      {R"~(format("%.3g", 3.14159))~", R"~("3.14")~"},
      {R"~(format("%x %X %o %b", 255, 255, 8, 5))~", R"~("ff FF 10 101")~"},
      {R"~(format("%#x %#o %#b", 255, 8, 5))~", R"~("0xff 010 0b101")~"},
      {R"~(format("%x", -255))~", R"~("-ff")~"},
      {R"~(format("%.4d", 7))~", R"~("0007")~"},
      {R"~(format("%t", true))~", R"~("true")~"},
      {R"~(format("%t", "false"))~", R"~("false")~"},
      {R"~(format("%s", 1.5))~", R"~("1.5")~"},
      {R"~(format("%s", true))~", R"~("true")~"},
      {R"~(format("%5s|%-5s|", "ab", "ab"))~", R"~("   ab|ab   |")~"},
      {R"~(format("%.3s", "abcdef"))~", R"~("abc")~"},
      {R"~(format("%.2s", "жзий"))~", R"~("жз")~"},
      {R"~(format("%4s|", "жз"))~", R"~("  жз|")~"},
      {R"~(format("%q", "a\"b<c>"))~", R"~("\"a\\\"b\\u003cc\\u003e\"")~"},
      {R"~(format("%v %v %v", "s", 1.5, true))~", R"~("s 1.5 true")~"},
      {R"~(format("%v", [1, "a"]))~", R"~("[1,\"a\"]")~"},
      {R"~(format("%v", null))~", R"~("null")~"},
      {R"~(format("%v", 1234567))~", R"~("1.234567e+06")~"},
      {R"~(format("%[2]s %[1]s", "world", "hello"))~", R"~("hello world")~"},
      {R"~(format("%[2]s %s %[1]s", "a", "b", "c"))~", R"~("b c a")~"},
      {R"~(format("%s%%", 50))~", R"~("50%")~"},
      {R"~(format("%d", "12"))~", R"~("12")~"},
      {R"~(format("%d", 1.5))~",
       "error: invalid_function_argument: format(): \"%d\" at offset 0: an integer is required, "
       "not 1.5"},
      {R"~(format("%d", "x"))~",
       "error: invalid_function_argument: format(): \"%d\" at offset 0: a number is required, "
       "not the string \"x\""},
      {R"~(format("%s", [1]))~",
       "error: invalid_function_argument: format(): \"%s\" at offset 0: a string is required, "
       "not a list"},
      {R"~(format("%s", null))~",
       "error: invalid_function_argument: format(): \"%s\" at offset 0: null cannot be "
       "formatted with %s (only with %v)"},
      {R"~(format("%s %s", "a"))~",
       "error: invalid_function_argument: format(): not enough arguments for \"%s\" at offset "
       "3: it needs argument 2 but there are 1"},
      {R"~(format("%s", "a", "b"))~",
       "error: invalid_function_argument: format(): too many arguments: the format string uses "
       "only 1"},
      {R"~(format("hello", "b"))~",
       "error: invalid_function_argument: format(): too many arguments: the format string has no "
       "verbs"},
      {R"~(format("%y", 1))~",
       "error: invalid_function_argument: format(): \"%y\" at offset 0: unsupported format verb "
       "%y in \"%y\""},
      {R"~(format("50%"))~",
       "error: invalid_function_argument: format(): the format string ends inside the verb "
       "starting at offset 2"},
      {R"~(format("%!", 1))~",
       "error: invalid_function_argument: format(): unrecognized format character \"!\" at "
       "offset 1"},
      {R"~(formatlist("%s=%d", ["a", "b"], [1, 2]))~", R"~(["a=1", "b=2"])~"},
      {R"~(formatlist("%s", []))~", "[]"},
      {R"~(formatlist("x"))~", R"~(["x"])~"},
      {R"~(formatlist("%s-%s", ["a"], ["b", "c"]))~",
       "error: invalid_function_argument: formatlist(): argument 3 has length 2, which is not the "
       "length 1 of argument 2"},
  });
}

TEST_CASE("functions: string, Unicode, regular expressions and edge cases", "[expr][functions]") {
  CheckAll({
      {R"~(upper("straße ñ ǆ"))~", R"~("STRAßE Ñ Ǆ")~"},
      {R"~(lower("ÀÉÎ Σ"))~", R"~("àéî σ")~"},
      {R"~(title("hello-wide world_x élan"))~", R"~("Hello-Wide World_x Élan")~"},
      {R"~(strrev("añb"))~", R"~("bña")~"},
      {R"~(length("añb"))~", "3"},
      {R"~(substr("hello", -10, 2))~", R"~("he")~"},
      {R"~(substr("hello", 10, 2))~", R"~("")~"},
      {R"~(substr("hello", 1, 0))~", R"~("")~"},
      {R"~(substr("hello", 1.5, 1))~",
       "error: invalid_function_argument: substr(): the second argument must be a whole number, "
       "not 1.5"},
      {R"~(trimspace("\u00a0\u2003 x \t"))~", R"~("x")~"},
      {R"~(trim("ééxé", "é"))~", R"~("x")~"},
      {R"~(chomp("a\r\n\r\nb\n"))~", R"~("a\r\n\r\nb")~"},
      {R"~(indent(4, "a\nb"))~", R"~("a\n    b")~"},
      {R"~(indent(-1, "a"))~",
       "error: invalid_function_argument: indent(): the number of spaces must be from 0 to 1024, "
       "not -1"},
      {R"~(join("-", ["a"], ["b", "c"]))~", R"~("a-b-c")~"},
      {R"~(join(",", [1, true]))~", R"~("1,true")~"},
      {R"~(join(",", ["a", null]))~",
       "error: invalid_function_argument: join(): element 1 is null; join() needs strings"},
      {R"~(join(","))~", "error: wrong_argument_count: join() takes at least 2 arguments, not 1"},
      {R"~(split("", "añ"))~", R"~(["a", "ñ"])~"},
      {R"~(split(", ", "a, b, "))~", R"~(["a", "b", ""])~"},
      {R"~(replace("abc", "", "-"))~", R"~("-a-b-c-")~"},
      {R"~(replace("aaa", "a", "b"))~", R"~("bbb")~"},
      {R"~(replace("2019-02-01", "/(\\d+)-(\\d+)-(\\d+)/", "$3.$2.$1"))~", R"~("01.02.2019")~"},
      {R"~(replace("key=value", "/(?P<k>\\w+)=(?P<v>\\w+)/", "$${v}=$${k}"))~", R"~("value=key")~"},
      {R"~(replace("abc", "/b/", "$$"))~", R"~("a$c")~"},
      {R"~(replace("abc", "/b/", "$1x"))~", R"~("ac")~"},
      {R"~(replace("abc", "/b/", "$${1}x"))~", R"~("axc")~"},
      {R"~(replace("baaa", "/a*/", "-"))~", R"~("-b-")~"},
      {R"~(replace("abc", "/x*/", "-"))~", R"~("-a-b-c-")~"},
      {R"~(replace("/", "/", "x"))~", R"~("x")~"},
      {R"~(regexall("a*", "baaa"))~", R"~(["", "aaa"])~"},
      {R"~(regexall("(\\w)(\\d)?", "a1b"))~", R"~([["a", "1"], ["b", null]])~"},
      {R"~(regexall("(?P<x>\\d)", "1 2"))~", R"~([{x = "1"}, {x = "2"}])~"},
      {R"~(regex("(?i)HELLO", "say hello"))~", R"~("hello")~"},
      {R"~(regex("\\p{Greek}+", "abc αβγ"))~", R"~("αβγ")~"},
      {R"~(regex("(a)(?P<n>b)", "ab"))~",
       "error: invalid_function_argument: regex(): a pattern cannot mix named and unnamed capture "
       "groups"},
      {R"~(regex("(", "x"))~",
       "error: invalid_function_argument: regex(): invalid regular expression: missing ): ("},
      {R"~(regex("(a)\\1", "aa"))~",
       "error: invalid_function_argument: regex(): invalid regular expression: invalid escape "
       "sequence: \\1"},
      {R"~(replace("x", "/(/", "y"))~",
       "error: invalid_function_argument: replace(): invalid regular expression: missing ): ("},
      {R"~(upper([1]))~",
       "error: invalid_function_argument: upper(): the first argument must be a string, not a "
       "list"},
      {R"~(upper(12))~", R"~("12")~"},
      {R"~(startswith("a", null))~",
       "error: invalid_function_argument: argument 2 of startswith() must not be null"},
  });
}

TEST_CASE("functions: regular expressions take linear time on hostile patterns",
          "[expr][functions]") {
  // (a+)+$ against a's and a final b backtracks exponentially in a
  // backtracking engine; RE2 answers at once.
  std::string text(5000, 'a');
  auto o = Run("regexall(\"(a+)+$\", \"" + text + "b\")");
  REQUIRE(o.ok());
  CHECK(o.value.size() == 0);
}

TEST_CASE("functions: string, unknown and sensitive arguments, and the caret",
          "[expr][functions]") {
  TableScope s;
  s.vars["u"] = Value::Unknown();
  s.vars["pw"] = Value::String("Hunter2").MarkedSensitive("var.pw");
  for (const char* e :
       {"upper(var.u)", "format(\"%s\", var.u)", "formatlist(\"%s\", var.u)",
        "join(\",\", [\"a\", var.u])", "regex(var.u, \"x\")", "replace(\"a\", \"a\", var.u)"}) {
    INFO(e);
    auto o = Run(e, s);
    REQUIRE(o.ok());
    CHECK(o.value.is_unknown());
  }
  CHECK(Show("upper(var.pw)", s) == "sensitive(\"HUNTER2\")");
  CHECK(Show("format(\"pw=%s\", var.pw)", s) == "sensitive(\"pw=Hunter2\")");
  CHECK(Show("split(\"n\", var.pw)", s) == "sensitive([\"Hu\", \"ter2\"])");
  CHECK(Show("length(var.pw)", s) == "sensitive(7)");
  auto o = Run("substr(\"abc\", \"x\", 1)");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].code == "invalid_function_argument");
  CHECK(o.errors[0].begin == 14);
  CHECK(o.errors[0].end == 17);
  auto fmt = Run("format(\"%d %d\", 1, \"x\")");
  REQUIRE(fmt.errors.size() == 1);
  CHECK(fmt.errors[0].begin == 19);  // under "x", the third argument
  CHECK(fmt.errors[0].end == 22);
}

}  // namespace
}  // namespace functions_string_test
}  // namespace cairn::expr
