#include "engine/manifest/format.h"

#include <catch2/catch.hpp>

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
  CHECK(bad.status().message().find("not valid YAML") != std::string::npos);
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
