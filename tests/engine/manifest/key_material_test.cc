// Key material alone: values and YAML in, where keys are, what is reported
// and what is hidden from the sources out.
#include "engine/manifest/key_material.h"

#include <catch2/catch.hpp>
#include <limits>

#include "base/private_key.h"
#include "base/redact.h"

namespace key_material_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const std::string kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH "
    "PRIVATE KEY-----\n";

// The key spelt with YAML escapes: the text itself holds no key.
const std::string kEscaped =
    "kind: ssh_key\n"
    "name: k\n"
    "spec:\n"
    "  public_key: \"\\x2D\\x2D\\x2D\\x2D\\x2DBEGIN OPENSSH PRIVATE KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\n"
    "b3BlbnNzaC1rZXktdjEAAAAA\\n\\x2D\\x2D\\x2D\\x2D\\x2DEND OPENSSH PRIVATE "
    "KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\n\"\n"
    "  region: eu-central\n"
    "enabled: true\n";

}  // namespace

TEST_CASE("key_material: which values may hold a key, and where keys are") {
  CHECK_FALSE(MayHoldKey(Value(3)));
  CHECK_FALSE(MayHoldKey(Value("ssh-ed25519 AAAA public")));
  CHECK(MayHoldKey(Value{{"x", Value::array({"PRIVATE KEY-----"})}}));
  Value v = {{"a", Value::array({"x", kKey})}, {"b/c", kKey}, {"e", "PRIVATE KEY----- only"}};
  CHECK(MayHoldKey(v));
  std::vector<std::string> pointers;
  KeyPointers(v, "", pointers);
  CHECK(pointers == std::vector<std::string>{"/a/1", "/b~1c"});
  pointers.clear();
  KeyPointers(Value("no key"), "/spec", pointers);
  CHECK(pointers.empty());
}

TEST_CASE("key_material: a key spelt with escapes is found in the scalars, refused and hidden") {
  ClearSecretsForTesting();
  REQUIRE_FALSE(FindPrivateKey(kEscaped).found());
  auto tree = YamlTree::Parse(kEscaped);
  std::vector<YamlNode> scalars = ScalarsHoldingKeys(*tree);
  REQUIRE(scalars.size() == 1);
  CHECK(scalars[0].Mark().line == 3);

  SourceFiles sources;
  std::vector<Diagnostic> diags;
  REQUIRE(AddSourceRefusingKeys(sources, "k.yaml", kEscaped, nullptr, diags));
  CHECK(diags.empty());
  CHECK(RefuseKeyScalars(sources, "k.yaml", scalars, diags));
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "private_key_material");
  CHECK(diags[0].summary == "private key material in a manifest");
  CHECK(diags[0].location.file == "k.yaml");
  CHECK(diags[0].location.line == 4);
  CHECK(diags[0].location.column == 15);
  CHECK(*sources.Line("k.yaml", 4) == std::string("  ") + kRedactedLine);
  CHECK(*sources.Line("k.yaml", 5) == "  region: eu-central");
  // Each line of the key itself is registered with the redactor.
  CHECK(Redact("got b3BlbnNzaC1rZXktdjEAAAAA here") == "got [REDACTED] here");
  ClearSecretsForTesting();

  CHECK_FALSE(RefuseKeyScalars(sources, "k.yaml", {}, diags));
  CHECK(diags.size() == 1);
}

TEST_CASE("key_material: a node's lines run to the line before the next node") {
  auto tree = YamlTree::Parse(kEscaped);
  YamlNode spec = tree->documents.at(0).Get("spec");
  SourceFiles sources;
  sources.Add("k.yaml", kEscaped);
  CHECK(NodeLines(sources, "k.yaml", spec) == std::pair<int, int>{4, 5});
  RedactNode(sources, "k.yaml", spec);
  CHECK(*sources.Line("k.yaml", 3) == "spec:");
  CHECK(*sources.Line("k.yaml", 4) == std::string("  ") + kRedactedLine);
  CHECK(*sources.Line("k.yaml", 5) == std::string("  ") + kRedactedLine);
  CHECK(*sources.Line("k.yaml", 6) == "enabled: true");
  // The last node runs to the end of the file.
  YamlNode enabled = tree->documents.at(0).Get("enabled");
  CHECK(NodeLines(sources, "k.yaml", enabled).first == 6);
  CHECK(NodeLines(sources, "k.yaml", enabled).second == std::numeric_limits<int>::max());
}

TEST_CASE("key_material: a source holding a key is added redacted and refused") {
  const std::string text = "kind: ssh_key\nname: k\nspec:\n  public_key: |\n    " +
                           kKey.substr(0, 36) + "    b3BlbnNzaC1rZXktdjEAAAAA\n    " +
                           kKey.substr(61);
  SourceFiles sources;
  std::vector<Diagnostic> diags;
  CHECK_FALSE(AddSourceRefusingKeys(sources, "main.yaml", text, nullptr, diags));
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == "private_key_material");
  CHECK(diags[0].summary == "private key material in a manifest");
  CHECK(diags[0].location.file == "main.yaml");
  CHECK(diags[0].location.line == 5);
  for (int line = 1; line <= 7; ++line) {
    auto l = sources.Line("main.yaml", line);
    if (l) CHECK(l->find("b3BlbnNzaC1rZXktdjEAAAAA") == std::string_view::npos);
  }

  SourceLocation at{"main.yaml", 7, 9, 1};
  CHECK_FALSE(AddSourceRefusingKeys(sources, "keys/id", kKey, &at, diags));
  REQUIRE(diags.size() == 2);
  CHECK(diags[1].summary == "private key material in a file read by file()");
  CHECK(diags[1].detail.rfind("read by file() at main.yaml:7:9; ", 0) == 0);
  CHECK(diags[1].location.file == "keys/id");
  CHECK(diags[1].location.line == 1);

  CHECK(AddSourceRefusingKeys(sources, "ok.yaml", "kind: network\n", nullptr, diags));
  CHECK(diags.size() == 2);
  CHECK(*sources.Line("ok.yaml", 1) == "kind: network");
}

}  // namespace key_material_test
