#include "base/value.h"

#include <catch2/catch.hpp>
#include <string>

namespace value_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {
std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }
}  // namespace

TEST_CASE("ParseJson reads one JSON value") {
  auto v = ParseJson(R"( {"a": [1, {"b": null}], "c": "d"} )");
  REQUIRE(v.ok());
  CHECK((*v)["a"][1].contains("b"));
  CHECK((*v)["c"] == "d");
  CHECK_FALSE(ParseJson("{").ok());
  CHECK_FALSE(ParseJson("").ok());
  CHECK_FALSE(ParseJson("{} {}").ok());
}

TEST_CASE("ParseJson refuses nesting deeper than the limit, however deep, without recursing") {
  CHECK(ParseJson(Nested(kMaxValueDepth)).ok());
  auto over = ParseJson(Nested(kMaxValueDepth + 1));
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().code() == StatusCode::kInvalidArgument);
  CHECK(over.status().message() == "JSON nests deeper than 64 levels");
  // Far past what a recursive parse or walk survives on a thread's stack.
  CHECK_FALSE(ParseJson("{\"name\": " + Nested(1000000) + "}").ok());
  std::string objects;
  for (int i = 0; i < 200000; ++i) objects += "{\"a\":";
  objects += "0" + std::string(200000, '}');
  CHECK_FALSE(ParseJson(objects).ok());
  // The bound is the caller's.
  CHECK(ParseJson(Nested(3), 3).ok());
  CHECK_FALSE(ParseJson(Nested(4), 3).ok());
}

TEST_CASE("ParseJson with a keep depth checks all of the text and keeps the top levels") {
  const std::string text =
      R"({"changes": [{"a": [1, {"b": 2}]}, {"c": 3}], "format_version": 3, "m": {"k": "v", "n": {}}})";
  auto v = ParseJson(text, kMaxValueDepth, 2);
  REQUIRE(v.ok());
  CHECK(*v == Value::parse(R"({"changes": [], "format_version": 3, "m": {"k": "v"}})"));
  // What is not kept is still parsed: an error in it, or too deep a nesting, refuses the text.
  CHECK_FALSE(ParseJson(R"({"changes": [{"a": [1,]}]})", kMaxValueDepth, 2).ok());
  CHECK_FALSE(ParseJson(std::string(100, '[') + std::string(100, ']'), kMaxValueDepth, 2).ok());
  CHECK(ParseJson(std::string(10, '[') + std::string(10, ']'), kMaxValueDepth, 2).ok());
}

TEST_CASE("ParseJson counts brackets inside strings as text, escaped quotes and backslashes too") {
  // Depth 1 however many brackets the strings hold: within a bound of 1.
  auto v = ParseJson(R"(["]]]{{\"[[[", "\\", "[{\\\"}]"])", 1);
  REQUIRE(v.ok());
  CHECK(*v == Value::array({"]]]{{\"[[[", "\\", "[{\\\"}]"}));
  // A backslash ending a string does not hide the quote that closes it.
  CHECK_FALSE(ParseJson(R"(["a\\", ["b"]])", 1).ok());
  CHECK(ParseJson(R"(["a\\", ["b"]])", 2).ok());
  // Text that is not JSON is refused as such, its brackets unbalanced or not.
  CHECK(ParseJson("]]]][[[[", 1).status().message() == "invalid JSON");
  CHECK(ParseJson(R"({"a": [1, 2}])", 8).status().message() == "invalid JSON");
  CHECK(ParseJson(R"(["unterminated)", 8).status().message() == "invalid JSON");
}

TEST_CASE("ParseJson refuses a NUL byte anywhere, which the lexer takes for the end") {
  CHECK_FALSE(ParseJson(std::string("{}\0garbage", 10)).ok());
  CHECK_FALSE(ParseJson(std::string("\"a\0b\"", 5)).ok());
  CHECK(ParseJson(R"("a\u0000b")").ok());  // escaped, it is a character like any other
}

}  // namespace value_test
