#include "engine/manifest/yaml_tree.h"

#include <catch2/catch.hpp>

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
  CHECK(doc.pairs().at(1).first.Mark().line == 1);
}

TEST_CASE("YamlTree resolves aliases to the anchored node") {
  auto tree = YamlTree::Parse("base: &b {region: eu}\nother: *b\n");
  REQUIRE_FALSE(tree->error);
  YamlNode doc = tree->documents.at(0);
  CHECK(doc.Get("other") == doc.Get("base"));
  CHECK(doc.Get("other").Get("region").Scalar() == "eu");
}

TEST_CASE("YamlTree reports syntax errors at yaml-cpp's mark and keeps earlier documents") {
  auto tree = YamlTree::Parse("a: 1\n---\nb: [1, 2\n");
  REQUIRE(tree->error);
  CHECK(tree->documents.size() == 1);
  CHECK(tree->error->mark.line == 3);
  CHECK_FALSE(tree->error->message.empty());
}

TEST_CASE("YamlTree stops a parser that emits more nodes than the text can hold") {
  auto tree = YamlTree::Parse(std::string(",2.]-  1\x8a"));
  REQUIRE(tree->error);
  CHECK(tree->error->message == "the YAML parser could not make sense of the text here");
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
