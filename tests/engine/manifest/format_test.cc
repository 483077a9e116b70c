#include "engine/manifest/format.h"

#include <catch2/catch.hpp>

#include "engine/manifest/yaml_value.h"

namespace format_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("fmt: indentation, spacing and blank lines become canonical, comments stay") {
  const std::string messy =
      "\n\n# The web tier.\r\n"
      "kind:    instance   \n"
      "name: web\n"
      "spec:\n"
      "    name: web   # per instance\n"
      "    region:   eu-central\n"
      "\n\n\n"
      "    rules:\n"
      "        - direction: inbound\n"
      "          # the only port\n"
      "          port: \"22\"\n"
      "---\n\n"
      "kind: variable\n"
      "name: motd\n"
      "default: |\n"
      "    Hello\n"
      "      indented  \n"
      "\n"
      "    world\n";
  auto got = FormatManifest(messy);
  REQUIRE(got.ok());
  CHECK(*got ==
        "# The web tier.\n"
        "kind: instance\n"
        "name: web\n"
        "spec:\n"
        "  name: web   # per instance\n"
        "  region: eu-central\n"
        "\n"
        "  rules:\n"
        "    - direction: inbound\n"
        "      # the only port\n"
        "      port: \"22\"\n"
        "---\n"
        "kind: variable\n"
        "name: motd\n"
        "default: |\n"
        "    Hello\n"
        "      indented  \n"
        "\n"
        "    world\n");
  // Canonical text is a fixed point.
  auto again = FormatManifest(*got);
  REQUIRE(again.ok());
  CHECK(*again == *got);
}

TEST_CASE("fmt: invalid YAML is an error, and a plain scalar's continuation lines move with it") {
  auto bad = FormatManifest("kind: [unclosed\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("YAML syntax error") != std::string::npos);
  CHECK(bad.status().message().find("line 2, column 1") != std::string::npos);
  // Re-indenting a plain multi-line scalar's continuation lines keeps its
  // value (the formatter checks that it does, node for node).
  auto folded = FormatManifest("a: one\n      two\nb: 1\n");
  REQUIRE(folded.ok());
  CHECK(*folded == "a: one\n  two\nb: 1\n");
}

TEST_CASE("fmt: a sequence written at its key's indentation moves one level in") {
  auto got = FormatManifest(
      "spec:\n  rules:\n  - direction: inbound\n    port: \"22\"\n  - port: \"443\"\n"
      "  name: edge\nlist:\n- a\n- b\n");
  REQUIRE(got.ok());
  CHECK(*got ==
        "spec:\n  rules:\n    - direction: inbound\n      port: \"22\"\n    - port: \"443\"\n"
        "  name: edge\nlist:\n  - a\n  - b\n");
  CHECK(*FormatManifest(*got) == *got);
}

namespace {

// LEVELS levels of 10 aliases each: 10^LEVELS nodes once expanded, in a few
// hundred bytes.
std::string AliasBomb(int levels) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string prev = "a";
  for (int i = 0; i < levels - 1; ++i) {
    std::string name = "l" + std::to_string(i);
    yaml += name + ": &" + name + " [";
    for (int k = 0; k < 10; ++k) yaml += (k ? ", *" : "*") + prev;
    yaml += "]\n";
    prev = name;
  }
  return yaml;
}

}  // namespace

TEST_CASE("fmt: an alias bomb is refused with the loader's bound, not expanded") {
  // Before the bound, comparing the re-read text node for node took
  // exponential time here (over a minute at 10 levels).
  const std::string bomb = AliasBomb(10);
  std::vector<Diagnostic> diags;
  auto got = FormatManifest(bomb, "bomb.yaml", diags);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == StatusCode::kInvalidArgument);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "document_too_large");
  CHECK(diags[0].location.file == "bomb.yaml");
  CHECK(diags[0].location.line == 5);  // l3, the list whose aliases go over
  CHECK(diags[0].location.column == 5);
  // A few aliases below the bound are formatted as before.
  auto small = FormatManifest(AliasBomb(3) + "b:    *l1\n");
  REQUIRE(small.ok());
  CHECK(small->find("b: *l1\n") != std::string::npos);
}

TEST_CASE("fmt: NUL bytes and bytes that are not UTF-8 are refused at the byte") {
  std::vector<Diagnostic> diags;
  auto nul = FormatManifest(std::string("kind:   network\nname: ab\0x41cd\n", 31), "n.yaml", diags);
  REQUIRE_FALSE(nul.ok());
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "nul_byte");
  CHECK(diags[0].location.line == 2);
  CHECK(diags[0].location.column == 9);
  diags.clear();
  auto latin1 = FormatManifest("kind:   network\nname: caf\xe9\n", "l.yaml", diags);
  REQUIRE_FALSE(latin1.ok());
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "invalid_utf8");
  CHECK(diags[0].location.line == 2);
  CHECK(diags[0].location.column == 10);
  // Without a file name, the position is in the message.
  auto message = FormatManifest("a: caf\xe9\n");
  REQUIRE_FALSE(message.ok());
  CHECK(message.status().message() == "line 1, column 7: text is not valid UTF-8 [invalid_utf8]");
}

TEST_CASE("the bound on a document is the same for fmt and for loading") {
  auto tree = YamlTree::Parse(AliasBomb(6));
  REQUIRE(tree->documents.size() == 1);
  std::vector<Diagnostic> checked, loaded;
  CHECK_FALSE(DocumentWithinBounds("f.yaml", tree->documents[0], checked));
  size_t budget = 0;
  YamlToValue("f.yaml", tree->documents[0], 0, budget, loaded);
  CHECK(budget > kMaxNodesPerDocument);
  REQUIRE(checked.size() == 1);
  REQUIRE(loaded.size() == 1);
  CHECK(checked[0].code == loaded[0].code);
  CHECK(checked[0].location.line == loaded[0].location.line);
  CHECK(checked[0].location.column == loaded[0].location.column);
  // Nodes written out are not what the bound is about: a long list loads.
  std::string list = "l:\n";
  for (size_t i = 0; i < kMaxNodesPerDocument + 10; ++i) list += "- x\n";
  auto written = YamlTree::Parse(list);
  std::vector<Diagnostic> none;
  CHECK(DocumentWithinBounds("l.yaml", written->documents[0], none));
  CHECK(none.empty());
}

TEST_CASE("fmt: a line of megabytes is formatted, not a stack overflow") {
  // A block scalar's header with a long comment: std::regex crashed here.
  // (Comparisons in parentheses: a failure would print megabytes.)
  const std::string comment(4 << 20, 'x');
  auto block = FormatManifest("a:    >-  #" + comment + "\n    text\n");
  REQUIRE(block.ok());
  CHECK((*block == "a: >-  #" + comment + "\n    text\n"));
  auto spaced = FormatManifest("- key:    " + comment + "\n");
  REQUIRE(spaced.ok());
  CHECK((*spaced == "- key: " + comment + "\n"));
  // What the patterns do not match is left alone.
  auto other = FormatManifest("a: b | c\n\"q\":   v\nl: |2+ # c\n    x\n");
  REQUIRE(other.ok());
  CHECK(*other == "a: b | c\n\"q\":   v\nl: |2+ # c\n    x\n");
}

}  // namespace format_test
