// The YAML-to-values stage alone: parsed text in, values and diagnostics
// with positions out.
#include "engine/manifest/yaml_value.h"

#include <catch2/catch.hpp>

namespace yaml_value_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

struct Converted {
  Value value;
  std::vector<Diagnostic> diags;
};

Converted Convert(const std::string& yaml) {
  auto tree = YamlTree::Parse(yaml);
  REQUIRE_FALSE(tree->error);
  REQUIRE(tree->documents.size() == 1);
  Converted c;
  AddTextDiagnostics("v.yaml", *tree, c.diags);
  size_t budget = 0;
  c.value = YamlToValue("v.yaml", tree->documents[0], 0, budget, c.diags);
  return c;
}

}  // namespace

TEST_CASE("plain scalars take the core schema's types, quoted ones stay text") {
  CHECK(PlainScalar("42") == Value(42));
  CHECK(PlainScalar("-7") == Value(-7));
  CHECK(PlainScalar("0x1F") == Value(31));
  CHECK(PlainScalar("0o17") == Value(15));
  CHECK(PlainScalar("2.5") == Value(2.5));
  CHECK(PlainScalar("1e3") == Value(1000.0));
  CHECK(PlainScalar("true") == Value(true));
  CHECK(PlainScalar("False") == Value(false));
  CHECK(PlainScalar("~").is_null());
  CHECK(PlainScalar("").is_null());
  CHECK(PlainScalar("10.0.0.0/16") == Value("10.0.0.0/16"));
  CHECK(PlainScalar("1.2.3") == Value("1.2.3"));
  CHECK(PlainScalar("yes") == Value("yes"));  // YAML 1.1's booleans are text

  auto c = Convert("{a: 1, b: \"1\", c: [x, 'true'], d: null}");
  CHECK(c.diags.empty());
  CHECK(c.value == Value{{"a", 1}, {"b", "1"}, {"c", Value::array({"x", "true"})}, {"d", nullptr}});
}

TEST_CASE("a repeated or structured key is reported at the key, the rest still read") {
  auto c = Convert("name: a\nsize: 1\nname: b\n? [x]\n: 2\n");
  REQUIRE(c.diags.size() == 2);
  CHECK(c.diags[0].code == "duplicate_key");
  CHECK(c.diags[0].summary == "key \"name\" appears twice in the same mapping");
  CHECK(c.diags[0].location.file == "v.yaml");
  CHECK(c.diags[0].location.line == 3);
  CHECK(c.diags[0].location.column == 1);
  CHECK(c.diags[1].code == "invalid_key");
  CHECK(c.value == Value{{"name", "a"}, {"size", 1}});
}

TEST_CASE("nesting beyond the limit is one diagnostic, not a crash") {
  std::string deep;
  for (int i = 0; i <= kMaxYamlDepth + 1; ++i) deep += "[";
  for (int i = 0; i <= kMaxYamlDepth + 1; ++i) deep += "]";
  auto c = Convert(deep);
  REQUIRE(c.diags.size() == 1);
  CHECK(c.diags[0].code == "document_too_deep");
}

TEST_CASE("text that is not UTF-8 is reported at the byte and replaced") {
  auto c = Convert("name: \"ab\\xff\"\n");
  CHECK(c.diags.empty());  // an escape makes valid UTF-8 (U+00FF)
  auto raw = Convert(std::string("name: ab\xff\xfe c\n"));
  REQUIRE(raw.diags.size() == 1);  // one run of bad bytes
  CHECK(raw.diags[0].code == "invalid_utf8");
  CHECK(raw.diags[0].location.line == 1);
  CHECK(raw.diags[0].location.column == 9);
  CHECK(raw.diags[0].location.length == 2);
  CHECK(raw.value["name"] == Value("ab\xEF\xBF\xBD\xEF\xBF\xBD c"));
  // Overlong forms and surrogates are not UTF-8 either.
  auto overlong = Convert(std::string("a: x\n\nb: \xC0\xAF\xED\xA0\x80\n"));
  REQUIRE(overlong.diags.size() == 1);
  CHECK(overlong.diags[0].location.line == 3);
  CHECK(overlong.diags[0].location.column == 4);
  CHECK(ValidUtf8("plain") == "plain");
}

TEST_CASE("a NUL byte is reported at the byte, never read as an escape") {
  // yaml-cpp alone reads "ab<NUL>x41cd" as "abAcd".
  auto c = Convert(std::string("name: ab\0x41cd\n", 15));
  REQUIRE(c.diags.size() == 1);
  CHECK(c.diags[0].code == "nul_byte");
  CHECK(c.diags[0].location.line == 1);
  CHECK(c.diags[0].location.column == 9);
  CHECK(c.value["name"] == Value("ab\xEF\xBF\xBDx41cd"));
  // Columns are counted as yaml-cpp counts them: a byte order mark is not.
  auto bom = Convert(std::string("\xEF\xBB\xBFname: \0\n", 11));
  REQUIRE(bom.diags.size() == 1);
  CHECK(bom.diags[0].location.column == 7);
  // Many runs: the first ones listed, the last saying how many more.
  std::string many;
  for (int i = 0; i < 30; ++i)
    many += "k" + std::to_string(i) + ": a" + std::string(1, '\0') + "\n";
  auto m = Convert(many);
  REQUIRE(m.diags.size() == YamlTree::kMaxBadByteRuns);
  CHECK(m.diags.back().location.line == static_cast<int>(YamlTree::kMaxBadByteRuns));
  CHECK(m.diags.back().detail.find("20 more") != std::string::npos);
}

TEST_CASE("a node's location spans a one-line scalar, quotes included") {
  auto tree = YamlTree::Parse("a: \"quoted\"\nb: plain\n");
  const YamlNode& doc = tree->documents[0];
  SourceLocation q = NodeLoc("f.yaml", doc.pairs()[0].second);
  CHECK(q.line == 1);
  CHECK(q.column == 4);
  CHECK(q.length == 8);
  SourceLocation p = NodeLoc("f.yaml", doc.pairs()[1].second);
  CHECK(p.line == 2);
  CHECK(p.length == 5);
  CHECK(NodeLoc("f.yaml", YamlNode()).line == 0);
}

}  // namespace yaml_value_test
