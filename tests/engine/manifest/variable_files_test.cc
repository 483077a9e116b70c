// Reading variable files alone: a --var-file in a MemEnv and the declared
// variables in, its entries, the sources and diagnostics out.
#include "engine/manifest/variable_files.h"

#include <catch2/catch.hpp>

#include "base/env.h"
#include "base/redact.h"

namespace variable_files_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

std::map<std::string, VariableDecl> Decls() {
  std::map<std::string, VariableDecl> out;
  for (auto [name, sensitive] :
       {std::pair{"region", false}, std::pair{"password", true}, std::pair{"sizes", false}}) {
    VariableDecl d;
    d.name = name;
    d.sensitive = sensitive;
    out.emplace(name, d);
  }
  return out;
}

struct Read {
  MemEnv env;
  SourceFiles sources;
  std::vector<Diagnostic> diags;
  std::vector<VariableFileEntry> entries;

  Read(const std::string& text, const std::string& path = "vars/prod.yaml") {
    env.AddFile("vars/prod.yaml", text);
    entries = ReadVariableFile(env, path, Decls(), sources, diags);
  }
};

}  // namespace

TEST_CASE("variable_files: a file's entries, declared ones with their values") {
  Read r(
      "region: eu-central\n"
      "sizes: [1, 2]\n"
      "colour: red\n",
      "vars/./prod.yaml");
  CHECK(r.diags.empty());
  REQUIRE(r.entries.size() == 3);
  CHECK(r.entries[0].name == "region");
  CHECK(r.entries[0].value == "eu-central");
  CHECK(r.entries[0].name_location.file == "vars/prod.yaml");
  CHECK(r.entries[0].name_location.line == 1);
  CHECK(r.entries[0].value_location.column == 9);
  CHECK(r.entries[1].value == Value::array({1, 2}));
  // Undeclared: kept (the variables stage warns), its value not read.
  CHECK(r.entries[2].name == "colour");
  CHECK(r.entries[2].value.is_null());
  CHECK(r.entries[2].value_location.line == 3);
  CHECK(*r.sources.Line("vars/prod.yaml", 1) == "region: eu-central");
}

TEST_CASE("variable_files: a sensitive variable's value is hidden from excerpts") {
  Read r("region: eu-central\npassword: hunter2\n");
  CHECK(r.diags.empty());
  REQUIRE(r.entries.size() == 2);
  CHECK(r.entries[1].value == "hunter2");
  CHECK(*r.sources.Line("vars/prod.yaml", 2) == std::string("password: ") + std::string(kRedacted));
  CHECK(*r.sources.Line("vars/prod.yaml", 1) == "region: eu-central");
}

TEST_CASE("variable_files: what cannot be read is reported") {
  Read missing("region: x\n", "vars/none.yaml");
  CHECK(missing.entries.empty());
  REQUIRE(missing.diags.size() == 1);
  CHECK(missing.diags[0].code == "file_not_found");
  CHECK(missing.diags[0].summary.rfind("cannot read variable file vars/none.yaml: ", 0) == 0);

  Read list("- region\n- x\n");
  CHECK(list.entries.empty());
  REQUIRE(list.diags.size() == 1);
  CHECK(list.diags[0].code == "invalid_document");
  CHECK(list.diags[0].location.file == "vars/prod.yaml");
  CHECK(list.diags[0].location.line == 1);

  Read syntax("region: [x\n");
  REQUIRE(syntax.diags.size() == 1);
  CHECK(syntax.diags[0].code == "yaml_syntax");
}

TEST_CASE("variable_files: a file holding a private key is refused whole") {
  ClearSecretsForTesting();
  Read text(
      "region: x\npassword: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  b3BlbnNzaC1rZXktdjEAAAAA\n"
      "  -----END OPENSSH PRIVATE KEY-----\n");
  CHECK(text.entries.empty());
  REQUIRE(text.diags.size() == 1);
  CHECK(text.diags[0].code == "private_key_material");
  CHECK(text.diags[0].location.line == 3);
  for (int n = 1; n <= 5; ++n) {
    CHECK(text.sources.Line("vars/prod.yaml", n)->find("b3BlbnNzaC1rZXktdjEAAAAA") ==
          std::string_view::npos);
  }

  Read escaped(
      "region: x\npassword: \"\\x2D\\x2D\\x2D\\x2D\\x2DBEGIN OPENSSH PRIVATE "
      "KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\nb3BlbnNzaC1rZXktdjEAAAAA\\n\\x2D\\x2D\\x2D\\x2D\\x2DEND "
      "OPENSSH PRIVATE KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\n\"\n");
  CHECK(escaped.entries.empty());
  REQUIRE(escaped.diags.size() == 1);
  CHECK(escaped.diags[0].code == "private_key_material");
  CHECK(escaped.diags[0].location.line == 2);
  CHECK(escaped.diags[0].location.column == 11);
  ClearSecretsForTesting();
}

}  // namespace variable_files_test
