// Encoding functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME; the
// same examples are in OpenTofu's website/docs/language/functions/NAME.mdx),
// then Cairn's own cases: escapes, numbers, malformed and hostile input
// (deep nesting, alias bombs, cycles), unknown and sensitive arguments.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_encoding_test {  // one namespace per test file: see tests/CMakeLists.txt
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

// The string value of `expr`, or "error: ..." .
std::string Text(const std::string& expr, TableScope& s) {
  auto o = Run(expr, s);
  if (!o.ok()) return "error: " + o.error();
  return o.value.is_string() ? o.value.as_string() : ToSource(o.value);
}

TEST_CASE("functions: encoding, Terraform's documented examples", "[expr][functions]") {
  CheckAll({
      {R"~(base64decode("SGVsbG8gV29ybGQ="))~", R"~("Hello World")~"},
      {R"~(base64encode("Hello World"))~", R"~("SGVsbG8gV29ybGQ=")~"},
      {R"~(csvdecode("a,b,c\n1,2,3\n4,5,6"))~",
       R"~([{a = "1", b = "2", c = "3"}, {a = "4", b = "5", c = "6"}])~"},
      {R"~(jsondecode("{\"hello\": \"world\"}"))~", R"~({hello = "world"})~"},
      {R"~(jsondecode("true"))~", "true"},
      {R"~(jsonencode({"hello"="world"}))~", R"~("{\"hello\":\"world\"}")~"},
      {R"~(urlencode("Hello World!"))~", R"~("Hello+World%21")~"},
      {R"~(urlencode("☃"))~", R"~("%E2%98%83")~"},
      {R"~("http://example.com/search?q=${urlencode("terraform urlencode")}")~",
       R"~("http://example.com/search?q=terraform+urlencode")~"},
      {R"~(yamldecode("hello: world"))~", R"~({hello = "world"})~"},
      {R"~(yamldecode("true"))~", "true"},
      {R"~(yamldecode("{a: &foo [1, 2, 3], b: *foo}"))~", "{a = [1, 2, 3], b = [1, 2, 3]}"},
      {R"~(yamldecode("{a: &foo [1, *foo, 3]}"))~",
       "error: invalid_function_argument: yamldecode(): YAML: an alias refers to an anchor from "
       "inside its own definition"},
      {R"~(yamldecode("{a: !not-supported foo}"))~",
       "error: invalid_function_argument: yamldecode(): YAML: unsupported tag \"!not-supported\""},
      {R"~(yamlencode({"a":"b", "c":"d"}))~", R"~("\"a\": \"b\"\n\"c\": \"d\"\n")~"},
      {R"~(yamlencode({"foo":[1, 2, 3], "bar": "baz"}))~",
       R"~("\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n- 3\n")~"},
      {R"~(yamlencode({"foo":[1, {"a":"b","c":"d"}, 3], "bar": "baz"}))~",
       R"~("\"bar\": \"baz\"\n\"foo\":\n- 1\n- \"a\": \"b\"\n  \"c\": \"d\"\n- 3\n")~"},
  });
}

TEST_CASE("functions: jsonencode writes Terraform's JSON", "[expr][functions]") {
  TableScope s;
  struct {
    const char* in;
    const char* json;
  } cases[] = {
      {"jsonencode(null)", "null"},
      {"jsonencode(1.5)", "1.5"},
      {"jsonencode(0.1)", "0.1"},
      {"jsonencode(1e21)", "1000000000000000000000"},
      {"jsonencode(-9223372036854775807)", "-9223372036854775807"},
      {"jsonencode([true, null, \"a\"])", "[true,null,\"a\"]"},
      {"jsonencode(toset([\"b\", \"a\"]))", "[\"a\",\"b\"]"},
      {"jsonencode({b = [], a = {}})", "{\"a\":{},\"b\":[]}"},
      {"jsonencode(\"<a href='x'>&</a>\")", "\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\""},
      {"jsonencode(\"tab\\tnl\\n\\\"q\\\" \\\\ \\u0001 \\u2028\")",
       "\"tab\\tnl\\n\\\"q\\\" \\\\ \\u0001 \\u2028\""},
      {"jsonencode(\"é☃\")", "\"é☃\""},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(Text(c.in, s) == c.json);
  }
}

TEST_CASE("functions: decoders refuse what is malformed or hostile", "[expr][functions]") {
  CheckAll({
      {R"~(jsondecode("{\"$cairn_unknown\": true}"))~", R"~({"$cairn_unknown" = true})~"},
      {R"~(jsondecode("[1, 2.5, \"x\", null, {\"a\": [true]}]"))~",
       R"~([1, 2.5, "x", null, {a = [true]}])~"},
      {R"~(jsondecode("18446744073709551615"))~", "18446744073709551616"},
      {R"~(jsondecode("{"))~", "error: invalid_function_argument: jsondecode(): invalid JSON"},
      {R"~(jsondecode("1 2"))~", "error: invalid_function_argument: jsondecode(): invalid JSON"},
      {R"~(jsondecode("1e999"))~", "error: invalid_function_argument: jsondecode(): invalid JSON"},
      {R"~(base64decode("SGVsbG8"))~",
       "error: invalid_function_argument: base64decode(): the string is not valid base64 (RFC "
       "4648's standard alphabet, with padding)"},
      {R"~(base64decode("SGV=bG8="))~",
       "error: invalid_function_argument: base64decode(): the string is not valid base64 (RFC "
       "4648's standard alphabet, with padding)"},
      {R"~(base64decode("/w=="))~",
       "error: invalid_function_argument: base64decode(): the decoded bytes are not valid UTF-8; "
       "strings are text"},
      {R"~(base64decode(""))~", R"~("")~"},
      {R"~(base64decode("YQ=="))~", R"~("a")~"},
      {R"~(base64encode("é"))~", R"~("w6k=")~"},
      {R"~(urlencode("a-b_c.d~e/f?g=h&i"))~", R"~("a-b_c.d~e%2Ff%3Fg%3Dh%26i")~"},
      {R"~(csvdecode("a,b\n\"x, \"\"y\"\"\",\"multi\nline\"\r\n\n3,4\n"))~",
       R"~([{a = "x, \"y\"", b = "multi\nline"}, {a = "3", b = "4"}])~"},
      {R"~(csvdecode("a,b"))~", "[]"},
      {R"~(csvdecode(""))~", "error: invalid_function_argument: csvdecode(): missing header line"},
      {R"~(csvdecode("a,b\n1,2,3"))~",
       "error: invalid_function_argument: csvdecode(): CSV: line 2 has 3 fields, but the header "
       "has 2"},
      {R"~(csvdecode("a,a\n1,2"))~",
       "error: invalid_function_argument: csvdecode(): duplicate column name \"a\""},
      {R"~(csvdecode("a\nx\"y"))~",
       "error: invalid_function_argument: csvdecode(): CSV: line 2: a bare \" in a field that is "
       "not quoted"},
      {R"~(csvdecode("a\n\"x\"y"))~",
       "error: invalid_function_argument: csvdecode(): CSV: line 2: extraneous or missing \" in "
       "a quoted field"},
      {R"~(yamldecode(""))~", "null"},
      {R"~(yamldecode("- 1\n- 0x1F\n- 0o17\n- 1.5e3\n- -2\n- ~\n- null\n- \"true\"\n- yes\n- .5"))~",
       R"~([1, 31, 15, 1500, -2, null, null, "true", true, 0.5])~"},
      {R"~(yamldecode("[on, Off, n, 'no', 1_000, 2001-12-4]"))~",
       R"~([true, false, false, "no", "1_000", "2001-12-04T00:00:00Z"])~"},
      {R"~(yamldecode("!!binary aGk="))~", R"~("aGk=")~"},
      {R"~(yamldecode("!!binary x"))~",
       "error: invalid_function_argument: yamldecode(): YAML: \"x\" is not valid base64 for "
       "!!binary"},
      {R"~(yamldecode("a: !!str 1\nb: !!int \"2\"\nc: !!float 3\nd: 2001-12-14"))~",
       R"~({a = "1", b = 2, c = 3, d = "2001-12-14T00:00:00Z"})~"},
      {R"~(yamldecode("a: |\n  x\n  y\n"))~", R"~({a = "x\ny\n"})~"},
      {R"~(yamldecode("1: a\ntrue: b"))~", R"~({"1" = "a", "true" = "b"})~"},
      {R"~(yamldecode("a: 1\n---\nb: 2"))~",
       "error: invalid_function_argument: yamldecode(): the text holds 2 YAML documents; "
       "yamldecode() reads one"},
      {R"~(yamldecode("a: .inf"))~",
       "error: invalid_function_argument: yamldecode(): YAML: \".inf\": infinity and NaN are not "
       "numbers Cairn can hold"},
      {R"~(yamldecode("[a, b"))~",
       "error: invalid_function_argument: yamldecode(): invalid YAML: line 1, column 1: end of "
       "sequence flow not found"},
      {R"~(yamldecode("!!int x"))~",
       "error: invalid_function_argument: yamldecode(): YAML: \"x\" is not a valid int"},
      {R"~(yamldecode("? [a]\n: b"))~",
       "error: invalid_function_argument: yamldecode(): YAML: a mapping's keys must be strings, "
       "numbers or bools"},
  });
  // Nesting deeper than kMaxValueDepth.
  std::string deep = std::string(100, '[') + std::string(100, ']');
  CHECK(Show("yamldecode(\"" + deep + "\")") ==
        "error: invalid_function_argument: yamldecode(): YAML: the document nests deeper than 64 "
        "levels");
  CHECK(Show("jsondecode(\"" + deep + "\")") ==
        "error: invalid_function_argument: jsondecode(): JSON nests deeper than 64 levels");
  // Far deeper than yaml-cpp's own recursion guard: an error, not a crash.
  std::string deeper = std::string(20000, '[');
  CHECK(Show("yamldecode(\"" + deeper + "\")").rfind("error: invalid_function_argument", 0) == 0);
  // A "billion laughs": six levels of ten aliases each expand to a million
  // values from a few hundred bytes.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\\n";
  std::string prev = "a";
  for (const char* name : {"b", "c", "d", "e", "f"}) {
    bomb += std::string(name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *" : "*") + prev;
    bomb += "]\\n";
    prev = name;
  }
  CHECK(Show("yamldecode(\"" + bomb + "\")") ==
        "error: invalid_function_argument: yamldecode(): YAML: the document expands to more than "
        "100000 values (through its aliases)");
}

TEST_CASE("functions: yamlencode writes Terraform's YAML", "[expr][functions]") {
  TableScope s;
  struct {
    const char* in;
    const char* yaml;
  } cases[] = {
      {"yamlencode(true)", "true\n...\n"},
      {"yamlencode(1.5)", "1.5\n...\n"},
      {"yamlencode(null)", "null\n...\n"},
      {"yamlencode(\"\")", "\"\"\n"},
      {"yamlencode(\"hello\")", "\"hello\"\n"},
      {"yamlencode(\"hello\\nworld\")", "|-\n  hello\n  world\n"},
      {"yamlencode({})", "{}\n"},
      {"yamlencode([])", "[]\n"},
      {"yamlencode([\"b\"])", "- \"b\"\n"},
      {"yamlencode(toset([\"b\", \"a\"]))", "- \"a\"\n- \"b\"\n"},
      {"yamlencode({a = {b = {c = 1}}, d = [[1, 2], []]})",
       "\"a\":\n  \"b\":\n    \"c\": 1\n\"d\":\n- - 1\n  - 2\n- []\n"},
      {"yamlencode({a = \"x\\ny\\n\"})", "\"a\": |\n  x\n  y\n"},
      {"yamlencode([\"x\\n\\n\"])", "- |+\n  x\n\n"},
      {"yamlencode(\" lead\\nx\")", "|2-\n   lead\n  x\n"},
      {"yamlencode(\"tab\\tx\\ny\")", "\"tab\\tx\\ny\"\n"},
      {"yamlencode(\"q\\\" \\\\ é\")", "\"q\\\" \\\\ é\"\n"},
      {"yamlencode({\"key: x\" = 1e21})", "\"key: x\": 1000000000000000000000\n"},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(Text(c.in, s) == c.yaml);
  }
  // What yamlencode writes, yamldecode reads back.
  const char* value =
      "{a = [1, 2.5, \"x\\ny\", true, null], b = {\"c d\" = [[], {}], e = \"\\ttab\"}}";
  CHECK(Show(std::string("yamldecode(yamlencode(") + value + "))", s) == Show(value, s));
  CHECK(Show(std::string("jsondecode(jsonencode(") + value + "))", s) == Show(value, s));
}

TEST_CASE("functions: encoding, unknown and sensitive arguments, and the caret",
          "[expr][functions]") {
  TableScope s;
  s.vars["u"] = Value::Unknown();
  s.vars["pw"] = Value::String("hunter2").MarkedSensitive("var.pw");
  CHECK(Run("jsonencode({a = var.u})", s).value.is_unknown());
  CHECK(Run("yamlencode([var.u])", s).value.is_unknown());
  CHECK(Run("base64encode(var.u)", s).value.is_unknown());
  CHECK(Show("base64encode(var.pw)", s) == "sensitive(\"aHVudGVyMg==\")");
  CHECK(Show("jsonencode({p = var.pw})", s) == "sensitive(\"{\\\"p\\\":\\\"hunter2\\\"}\")");
  CHECK(Show("jsondecode(jsonencode({p = var.pw})).p", s) == "sensitive(\"hunter2\")");
  auto o = Run("jsondecode(\"{\")");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].code == "invalid_function_argument");
  CHECK(o.errors[0].begin == 11);
  CHECK(o.errors[0].end == 14);
  CHECK(Show("base64encode([1])") ==
        "error: invalid_function_argument: base64encode(): the first argument must be a string, "
        "not a list");
}

}  // namespace
}  // namespace functions_encoding_test
}  // namespace cairn::expr
