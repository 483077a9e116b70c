#include "engine/manifest/yaml_tree.h"

#include <catch2/catch.hpp>

namespace yaml_tree_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("YamlTree keeps every node's position and whether a scalar was quoted") {
  auto tree =
      YamlTree::Parse("kind: instance\nspec:\n  plan: \"s-1\"\n  keys: [a, 'b']\n---\n- 1\n");
  REQUIRE_FALSE(tree->error);
  REQUIRE(tree->documents.size() == 2);
  YamlNode doc = tree->documents[0];
  REQUIRE(doc.IsMap());
  CHECK(doc.Get("kind").Scalar() == "instance");
  CHECK_FALSE(doc.Get("kind").quoted());
  YamlNode plan = doc.Get("spec").Get("plan");
  CHECK(plan.quoted());
  CHECK(plan.Mark().line == 2);
  CHECK(plan.Mark().column == 8);
  YamlNode keys = doc.Get("spec").Get("keys");
  REQUIRE(keys.IsSequence());
  REQUIRE(keys.size() == 2);
  CHECK(keys[1].Scalar() == "b");
  CHECK(keys[1].Mark().column == 12);
  CHECK_FALSE(doc.Get("missing").IsDefined());
  CHECK(tree->documents[1].IsSequence());
  // Map keys keep their positions too.
  REQUIRE(doc.pairs().size() == 2);
  CHECK(doc.pairs()[1].first.Mark().line == 1);
}

TEST_CASE("YamlTree resolves aliases to the anchored node") {
  auto tree = YamlTree::Parse("base: &b {region: eu}\nother: *b\n");
  REQUIRE_FALSE(tree->error);
  YamlNode doc = tree->documents.at(0);
  CHECK(doc.Get("other") == doc.Get("base"));
  CHECK(doc.Get("other").Get("region").Scalar() == "eu");
}

TEST_CASE("YamlTree reports syntax errors at the parser's mark and keeps earlier documents") {
  auto tree = YamlTree::Parse("a: 1\n---\nb: [1, 2\n");
  REQUIRE(tree->error);
  CHECK(tree->documents.size() == 1);
  CHECK(tree->error->mark.line == 3);
  // The problem, and the construct it was found in, with where that began.
  CHECK(tree->error->message ==
        "did not find expected ',' or ']', while parsing a flow sequence that began at 3:4");
}

TEST_CASE("YamlTree reports an error on text that made yaml-cpp loop forever") {
  auto tree = YamlTree::Parse(std::string(",2.]-  1\x8a"));
  REQUIRE(tree->error);
  CHECK(tree->documents.empty());
  CHECK(tree->error->mark.line == 0);
  REQUIRE(tree->bad_bytes.size() == 1);
  CHECK(tree->bad_bytes[0].mark.column == 8);
}

TEST_CASE("YamlTree counts columns in bytes on lines that are not ASCII") {
  // "é" is two bytes and "€" three: each one character to the parser.
  auto tree = YamlTree::Parse("a: \"\xC3\xA9\xE2\x82\xAC\"\nb: [\xC3\xA9, x]\nc: y\n");
  REQUIRE_FALSE(tree->error);
  YamlNode doc = tree->documents.at(0);
  CHECK(doc.Get("a").Scalar() == "\xC3\xA9\xE2\x82\xAC");
  YamlNode b = doc.Get("b");
  REQUIRE(b.size() == 2);
  CHECK(b[1].Mark().line == 1);
  CHECK(b[1].Mark().column == 8);  // 'b', ':', ' ', '[', two bytes, ',', ' '
  CHECK(doc.Get("c").Mark().line == 2);
  CHECK(doc.Get("c").Mark().column == 3);
  // A byte order mark is not counted, and a bad byte is one byte.
  auto bom = YamlTree::Parse("\xEF\xBB\xBFk: \"\xFF\xFEz\"\nv: w\n");
  REQUIRE_FALSE(bom->error);
  CHECK(bom->documents.at(0).Get("k").Scalar() == "\xEF\xBF\xBD\xEF\xBF\xBDz");
  CHECK(bom->documents.at(0).Get("k").Mark().column == 3);
  REQUIRE(bom->documents.at(0).pairs().size() == 2);
  CHECK(bom->documents.at(0).pairs()[1].first.Mark().line == 1);
  CHECK(bom->documents.at(0).Get("v").Mark().column == 3);
  REQUIRE(bom->bad_bytes.size() == 1);
  CHECK(bom->bad_bytes[0].mark.column == 4);
  CHECK(bom->bad_bytes[0].length == 2);
  // An error after non-ASCII text is placed in bytes too.
  auto bad = YamlTree::Parse("\xC3\xA9: [1\n");
  REQUIRE(bad->error);
  CHECK(bad->error->message.find("that began at 1:5") != std::string::npos);
}

TEST_CASE("YamlTree lists control characters YAML cannot hold and reads on") {
  auto tree = YamlTree::Parse("a: \"x\x01\x02\"\nb: y\x7F\nc: \"\xC2\x80\"\nd: \xFF\x1B\n");
  REQUIRE_FALSE(tree->error);
  REQUIRE(tree->bad_bytes.size() == 5);
  using Kind = YamlBadBytes::Kind;
  CHECK(tree->bad_bytes[0].kind == Kind::kControl);
  CHECK(tree->bad_bytes[0].code_point == 0x01);
  CHECK(tree->bad_bytes[0].length == 2);  // a run of two
  CHECK(tree->bad_bytes[0].mark.column == 5);
  CHECK(tree->bad_bytes[1].code_point == 0x7F);
  CHECK(tree->bad_bytes[1].mark.line == 1);
  CHECK(tree->bad_bytes[2].code_point == 0x80);  // C1: two bytes
  CHECK(tree->bad_bytes[2].length == 2);
  CHECK(tree->bad_bytes[3].kind == Kind::kNotUtf8);
  CHECK(tree->bad_bytes[4].kind == Kind::kControl);
  CHECK(tree->bad_bytes[4].mark.column == 4);
  // Each is read as U+FFFD, and the rest of the text is still read.
  YamlNode doc = tree->documents.at(0);
  CHECK(doc.Get("a").Scalar() == "x\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(doc.Get("d").Mark().line == 3);
  // A tab, NEL and the byte order mark are not control characters here.
  auto fine = YamlTree::Parse("a: \"x\tb\"\nb: \"\xC2\x85\xEF\xBB\xBF\"\n");
  REQUIRE_FALSE(fine->error);
  CHECK(fine->bad_bytes.empty());
  CHECK(fine->documents.at(0).Get("a").Scalar() == "x\tb");
}

TEST_CASE("YamlTree stops at collections nested past its bound, at once") {
  // 300,000 open brackets took libyaml minutes (each token checks every
  // open flow collection): the tree stops the parser at its bound.
  std::string deep = "a: " + std::string(300000, '[') + std::string(300000, ']') + "\n";
  auto tree = YamlTree::Parse(deep);
  REQUIRE(tree->error);
  CHECK(tree->error->message == "collections nest deeper than 256 levels here");
  CHECK(tree->error->mark.column == 3 + 255);  // the mapping is the first level
  CHECK(tree->documents.empty());
  // Up to the bound, the tree is built (and yaml_value.h reports a
  // document deeper than it allows).
  std::string within =
      std::string(YamlTree::kMaxDepth, '[') + std::string(YamlTree::kMaxDepth, ']');
  auto ok = YamlTree::Parse(within);
  REQUIRE_FALSE(ok->error);
  CHECK(ok->documents.size() == 1);
}

TEST_CASE("YamlTree reads YAML's null spellings as null and everything quoted as a string") {
  auto tree = YamlTree::Parse(
      "a:\nb: ~\nc: null\nd: NULL\ne: 'null'\nf: !!str null\ng: |\n  x\nh: nil\ni: ! x\n");
  REQUIRE_FALSE(tree->error);
  YamlNode doc = tree->documents.at(0);
  for (const char* k : {"a", "b", "c", "d"}) {
    INFO(k);
    CHECK(doc.Get(k).IsNull());
  }
  for (const char* k : {"e", "f", "g", "i"}) {
    INFO(k);
    CHECK(doc.Get(k).IsScalar());
    CHECK(doc.Get(k).quoted());
  }
  CHECK(doc.Get("e").Scalar() == "null");
  CHECK(doc.Get("g").Scalar() == "x\n");
  CHECK(doc.Get("h").IsScalar());
  CHECK_FALSE(doc.Get("h").quoted());
}

TEST_CASE(
    "YamlTree refuses an alias to an anchor it has not seen, and anchors end with their document") {
  auto unknown = YamlTree::Parse("a: *nowhere\n");
  REQUIRE(unknown->error);
  CHECK(unknown->error->mark.column == 3);
  auto later = YamlTree::Parse("a: &x 1\n---\nb: *x\n");
  REQUIRE(later->error);
  CHECK(later->documents.size() == 1);
  CHECK(later->error->mark.line == 2);
}

TEST_CASE("a node ends where the next node of the file begins, across documents") {
  auto tree = YamlTree::Parse("a: {b: 1,\n  c: 2}\nd: x\n---\ne: y\n");
  REQUIRE(tree->documents.size() == 2);
  YamlNode flow = tree->documents[0].Get("a");
  CHECK(flow.EndMark().line == 2);  // at "d"
  CHECK(flow.EndMark().column == 0);
  YamlNode x = tree->documents[0].Get("d");
  CHECK(x.EndMark().line >= 3);  // in the next document, not unknown
  YamlNode y = tree->documents[1].Get("e");
  CHECK(y.EndMark().is_null());        // nothing follows
  CHECK(tree->Scalars().size() == 9);  // a b 1 c 2 d x e y
}

TEST_CASE("YamlTree keeps every child of collections larger and more numerous than its blocks") {
  // The tree stores nodes and children in blocks of 1,024: a sequence of
  // 3,000 items (larger than a block), 2,000 maps of three pairs (many
  // blocks) and nesting that interleaves children of open collections.
  std::string text = "big: [";
  for (int i = 0; i < 3000; ++i) text += (i ? ", " : "") + std::to_string(i);
  text += "]\nmaps:\n";
  for (int i = 0; i < 2000; ++i) {
    text += "  - {name: n" + std::to_string(i) + ", inner: {a: [x, {b: " + std::to_string(i) +
            "}]}, last: " + std::to_string(i * 2) + "}\n";
  }
  text += "tail: end\n";
  auto tree = YamlTree::Parse(text);
  REQUIRE_FALSE(tree->error);
  YamlNode doc = tree->documents.at(0);
  REQUIRE(doc.size() == 3);
  YamlNode big = doc.Get("big");
  REQUIRE(big.size() == 3000);
  REQUIRE(big.items().size() == 3000);
  CHECK(big[0].Scalar() == "0");
  CHECK(big[2999].Scalar() == "2999");
  CHECK(big.items()[1500].Scalar() == "1500");
  CHECK_FALSE(big[3000].IsDefined());
  YamlNode maps = doc.Get("maps");
  REQUIRE(maps.size() == 2000);
  for (int i : {0, 1, 1023, 1024, 1999}) {
    YamlNode m = maps[i];
    REQUIRE(m.pairs().size() == 3);
    CHECK(m.pairs()[0].first.Scalar() == "name");
    CHECK(m.Get("name").Scalar() == "n" + std::to_string(i));
    CHECK(m.Get("last").Scalar() == std::to_string(i * 2));
    YamlNode a = m.Get("inner").Get("a");
    REQUIRE(a.size() == 2);
    CHECK(a[0].Scalar() == "x");
    CHECK(a[1].Get("b").Scalar() == std::to_string(i));
    CHECK(m.Get("inner").Mark().line == 2 + i);
  }
  CHECK(doc.Get("tail").Scalar() == "end");
  // A scalar has no children, a map no items and a sequence no pairs.
  CHECK(doc.Get("tail").items().empty());
  CHECK(doc.items().empty());
  CHECK(big.pairs().empty());
  CHECK(tree->Scalars().size() == 1 + 3000 + 1 + 2000 * 9 + 2);
}

TEST_CASE("YamlTree gives an alias inside its own anchored collection the whole collection") {
  auto tree = YamlTree::Parse("a: &s [1, *s, 3]\n");
  REQUIRE_FALSE(tree->error);
  YamlNode s = tree->documents.at(0).Get("a");
  REQUIRE(s.size() == 3);
  CHECK(s[1] == s);
  CHECK(s[1][2].Scalar() == "3");
}

}  // namespace yaml_tree_test
