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

namespace {

// The same type at every level (nlohmann's == calls 1 and 1.0 equal).
bool SameTypes(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameTypes(a[i], b[i])) return false;
    }
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !SameTypes(it.value(), b[it.key()])) return false;
    }
  }
  return true;
}

// ParseJson's verdict and value against nlohmann's parser alone.
void CheckAsNlohmann(const std::string& text) {
  INFO(text.substr(0, 200));
  Value expected = Value::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  auto got = ParseJson(text);
  REQUIRE(got.ok() == !expected.is_discarded());
  if (!got.ok()) return;
  CHECK(*got == expected);
  CHECK(got->dump() == expected.dump());
  CHECK(SameTypes(*got, expected));
}

}  // namespace

TEST_CASE("ParseJson builds what nlohmann's parser builds, type for type") {
  // Numbers: unsigned when not negative, signed when negative, floats;
  // what simdjson refuses (past 64 bits, out of a double's range) is left
  // to nlohmann.
  for (const char* text : {"0",
                           "5",
                           "-5",
                           "-0.0",
                           "0.0",
                           "1.5",
                           "-2.25e-3",
                           "1E5",
                           "1e+5",
                           "1e-400",
                           "1e400",
                           "-1e400",
                           "18446744073709551615",
                           "18446744073709551616",
                           "9223372036854775807",
                           "9223372036854775808",
                           "-9223372036854775808",
                           "-9223372036854775809",
                           "123456789012345678901234567890",
                           "0.1",
                           "3.141592653589793",
                           "[0, -0.0, 1, -1, 2.5]"}) {
    CheckAsNlohmann(text);
  }
  // An integer -0: equal, and written the same (nlohmann alone keeps it signed).
  auto minus_zero = ParseJson("[-0]");
  REQUIRE(minus_zero.ok());
  CHECK(*minus_zero == Value::parse("[-0]"));
  CHECK(minus_zero->dump() == "[0]");
  // Strings: escapes, surrogate pairs and lone surrogates, UTF-8 valid or not.
  for (const char* text :
       {R"("")", R"("a\"b\\c\/d\b\f\n\r\t")", R"("\u00e9\u4e2d")", R"("\ud83d\ude00")",
        R"("\ud800")", R"("\udc00")", R"("\ud800x")", "\"caf\xc3\xa9\"", "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "\"\x7f\"", "\"\x01\"",
        R"("\u0000")", R"("\x")", R"("open)"}) {
    CheckAsNlohmann(text);
  }
  // Structure: a key written twice (the last wins), keys out of order,
  // whitespace, a byte order mark, what follows the value, broken text.
  for (const char* text : {R"({"a": 1, "a": 2})",
                           R"({"b": 1, "a": {"d": [], "c": {}}, "a": [true, false, null]})",
                           R"({"z": 1, "y": 2, "x": 3, "y": 4})",
                           " \t\r\n[1] \n",
                           "\xef\xbb\xbf[1]",
                           "[1,]",
                           R"({"a":1,})",
                           "01",
                           "1.",
                           ".5",
                           "+1",
                           "[1] x",
                           "nul",
                           "truex",
                           "[]",
                           "{}",
                           "-",
                           R"({"a" 1})",
                           R"({1: 2})",
                           "[[[]]]",
                           "true",
                           "false",
                           "null"}) {
    CheckAsNlohmann(text);
  }
}

TEST_CASE("ParseJson reads a listing page and a text past simdjson's size as nlohmann does") {
  // A page of a listing as the API answers one: 200 objects of every type.
  Value page = {{"pagination", {{"has_more", true}, {"next_cursor", "HC1so_oNTU62zJljZal0ng"}}}};
  Value items = Value::array();
  for (int i = 0; i < 200; ++i) {
    items.push_back({{"id", "inst_" + std::to_string(i)},
                     {"name", "web-\u00e9-" + std::to_string(i)},
                     {"size_gb", i},
                     {"offset", -i},
                     {"ratio", i / 7.0},
                     {"ipv4", i % 2 ? Value(nullptr) : Value("100.64.0." + std::to_string(i))},
                     {"ssh_keys", Value::array({"key_a", "key_b"})},
                     {"labels", {{"team", "core"}, {"tier", i % 3}}},
                     {"ready", i % 2 == 0}});
  }
  page["data"] = items;
  CheckAsNlohmann(page.dump());
  CheckAsNlohmann(page.dump(2));
  // Over 1 MiB: nlohmann's parser reads it (simdjson would keep a copy).
  Value big = Value::array();
  while (big.dump().size() <= (size_t{1} << 20)) big.push_back(page["data"]);
  CheckAsNlohmann(big.dump());
}

}  // namespace value_test
