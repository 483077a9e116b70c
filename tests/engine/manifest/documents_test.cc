// The documents stage alone: files' text in, their documents (parsed, then
// classified) and diagnostics out, with no file system or loader behind it.
#include "engine/manifest/documents.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "base/redact.h"
#include "base/schema/schema_registry.h"

namespace documents_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const std::string kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH "
    "PRIVATE KEY-----\n";

std::shared_ptr<const SchemaRegistry> Registry() {
  static auto registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  return registry;
}

// The one document of `yaml`, parsed, in scope `scope`.
struct One {
  Documents parsed;
  SourceFiles sources;
  std::vector<Diagnostic> diags;
  bool valid = false;

  explicit One(const std::string& yaml, size_t scope = 0) {
    parsed = ParseDocuments({{"m.yaml", yaml}}, sources);
    REQUIRE(parsed.diagnostics.empty());
    REQUIRE(parsed.docs.size() == 1);
    doc().scope = scope;
    valid = ClassifyDocument(doc(), *Registry(), DocumentKinds(*Registry()), diags);
  }
  ManifestDocument& doc() { return parsed.docs[0]; }
};

void CheckAt(const Diagnostic& d, const std::string& code, int line, int column) {
  INFO(d.code << " " << d.summary << " at " << d.location.line << ":" << d.location.column);
  CHECK(d.code == code);
  CHECK(d.location.file == "m.yaml");
  CHECK(d.location.line == line);
  CHECK(d.location.column == column);
}

}  // namespace

TEST_CASE("documents: files are parsed into their mapping documents, in order") {
  SourceFiles sources;
  Documents d = ParseDocuments({{"b.yaml", "kind: network\nname: n\n---\n---\nkind: volume\n"},
                                {"sub/a.yaml", "- not\n- a mapping\n---\nkind: local\n"}},
                               sources);
  CHECK(d.files == std::vector<std::string>{"b.yaml", "sub/a.yaml"});
  REQUIRE(d.docs.size() == 3);  // the empty document is no document
  CHECK(d.docs[0].file == "b.yaml");
  CHECK(d.docs[0].dir == ".");
  CHECK(d.docs[0].value == Value{{"kind", "network"}, {"name", "n"}});
  CHECK(d.docs[0].kind.empty());  // not classified yet
  CHECK(d.docs[1].value == Value{{"kind", "volume"}});
  CHECK(d.docs[2].file == "sub/a.yaml");
  CHECK(d.docs[2].dir == "sub");
  CHECK(d.docs[2].node.Mark().line == 3);
  CHECK(d.trees.size() == 2);
  CHECK(d.keyed_files.empty());
  REQUIRE(d.diagnostics.size() == 1);
  CHECK(d.diagnostics[0].code == "invalid_document");
  CHECK(d.diagnostics[0].location.file == "sub/a.yaml");
  CHECK(d.diagnostics[0].location.line == 1);
  CHECK(d.diagnostics[0].location.column == 1);
  CHECK(*sources.Line("b.yaml", 2) == "name: n");
}

TEST_CASE("documents: a syntax error keeps the documents before it") {
  SourceFiles sources;
  Documents d =
      ParseDocuments({{"m.yaml", "kind: network\nname: n\n---\nkind: [volume\n"}}, sources);
  CHECK(d.docs.size() == 1);
  REQUIRE(d.diagnostics.size() == 1);
  CHECK(d.diagnostics[0].code == "yaml_syntax");
  CHECK(d.diagnostics[0].location.file == "m.yaml");
}

TEST_CASE("documents: a file holding a key is reported once, hidden, and still read") {
  ClearSecretsForTesting();
  SourceFiles sources;
  const std::string text = "kind: ssh_key\nname: k\nspec:\n  public_key: |\n    " +
                           kKey.substr(0, 36) + "    b3BlbnNzaC1rZXktdjEAAAAA\n    " +
                           kKey.substr(61) + "bad: [\n";
  Documents d = ParseDocuments({{"k.yaml", text}, {"ok.yaml", "kind: network\n"}}, sources);
  CHECK(d.keyed_files == std::set<std::string>{"k.yaml"});
  std::vector<std::string> codes;
  for (const auto& diag : d.diagnostics) codes.push_back(diag.code);
  CHECK(codes == std::vector<std::string>{"private_key_material", "yaml_syntax"});
  CHECK(d.diagnostics[0].location.file == "k.yaml");
  CHECK(d.diagnostics[0].location.line == 5);
  for (int line = 1; line <= 8; ++line) {
    auto l = sources.Line("k.yaml", line);
    if (l) CHECK(l->find("b3BlbnNzaC1rZXktdjEAAAAA") == std::string_view::npos);
  }
  ClearSecretsForTesting();
}

TEST_CASE("documents: the kinds are the registry's and the language's, sorted") {
  auto kinds = DocumentKinds(*Registry());
  CHECK(std::is_sorted(kinds.begin(), kinds.end()));
  for (const char* k : {"network", "instance", "variable", "output", "module", "moved"}) {
    CHECK(std::find(kinds.begin(), kinds.end(), k) != kinds.end());
  }
}

TEST_CASE("documents: a valid document is classified") {
  One r("kind: network\nname: web\nspec: {}\n");
  CHECK(r.valid);
  CHECK(r.diags.empty());
  CHECK(r.doc().kind == "network");
  CHECK(r.doc().name == "web");
  CHECK(r.doc().location.line == 1);
  CHECK(r.doc().location.column == 7);
  One moved("kind: moved\nfrom: network.a\nto: network.b\n");  // needs no name
  CHECK(moved.valid);
  CHECK(moved.doc().kind == "moved");
}

TEST_CASE("documents: a document's kind must be there, a string and known") {
  One missing("name: web\n");
  CHECK_FALSE(missing.valid);
  REQUIRE(missing.diags.size() == 1);
  CheckAt(missing.diags[0], "missing_field", 1, 1);
  CHECK(missing.diags[0].detail.rfind("every document starts with kind: one of ", 0) == 0);

  One list("kind: [network]\nname: web\n");
  CHECK_FALSE(list.valid);
  REQUIRE(list.diags.size() == 1);
  CheckAt(list.diags[0], "wrong_type", 1, 7);
  CHECK(list.diags[0].summary == "kind must be a string, not a list");

  One typo("name: web\nkind: netwrok\n");
  CHECK_FALSE(typo.valid);
  CHECK(typo.doc().kind.empty());
  REQUIRE(typo.diags.size() == 1);
  CheckAt(typo.diags[0], "unknown_kind", 2, 7);
  CHECK(typo.diags[0].summary == "unknown kind \"netwrok\"");
  CHECK(typo.diags[0].detail.rfind("did you mean \"network\"?\nknown kinds: ", 0) == 0);
}

TEST_CASE("documents: a document's name must be a valid one where it needs one") {
  One none("kind: variable\ntype: string\n");
  CHECK_FALSE(none.valid);
  REQUIRE(none.diags.size() == 1);
  CheckAt(none.diags[0], "missing_field", 1, 7);
  CHECK(none.diags[0].summary == "missing required field \"name\" in variable document");

  One bad("kind: network\nname: 9lives\n");
  CHECK_FALSE(bad.valid);
  CHECK(bad.doc().kind.empty());
  REQUIRE(bad.diags.size() == 1);
  CheckAt(bad.diags[0], "invalid_name", 2, 7);

  One number("kind: network\nname: {a: 1}\n");
  CHECK_FALSE(number.valid);
  REQUIRE(number.diags.size() == 1);
  CheckAt(number.diags[0], "wrong_type", 2, 7);
}

TEST_CASE("documents: unknown keys are reported, the document stays valid") {
  One r("kind: network\nname: web\nspecc: {}\ncount: 2\n");
  CHECK(r.valid);
  REQUIRE(r.diags.size() == 1);
  CheckAt(r.diags[0], "unknown_field", 3, 1);
  CHECK(r.diags[0].summary == "unknown field \"specc\" in network document");
  CHECK(r.diags[0].detail == "did you mean \"spec\"?");

  // A provider's token and a backend's url are refused where they are read.
  One provider("kind: provider\ntoken: abc\n");
  CHECK(provider.valid);
  CHECK(provider.diags.empty());
  One local("kind: local\nname: l\nvalue: 1\ntoken: abc\n");
  CHECK(local.valid);
  REQUIRE(local.diags.size() == 1);
  CheckAt(local.diags[0], "unknown_field", 4, 1);
}

TEST_CASE("documents: a module may not declare what belongs to the stack") {
  One provider("kind: provider\nendpoint: http://x\n", 1);
  CHECK_FALSE(provider.valid);
  REQUIRE(provider.diags.size() == 1);
  CheckAt(provider.diags[0], "not_in_module", 1, 7);
  CHECK(provider.diags[0].detail == "the stack's provider serves its modules too");
  One data("kind: data\nname: d\ntype: network\nid: x\n", 1);
  CHECK_FALSE(data.valid);
  REQUIRE(data.diags.size() == 1);
  CHECK(data.diags[0].code == "not_in_module");
  One network("kind: network\nname: web\n", 1);  // a resource is fine
  CHECK(network.valid);
}

}  // namespace documents_test
