// Secrets through the loader: a sensitive variable's value in a variable
// file never shows in an excerpt.
#include <catch2/catch.hpp>

#include "base/redact.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

using namespace cairn;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

namespace {

LoadOptions Options(const std::string& path) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.paths = {path};
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + "\n";
  }
  return out;
}

std::string Rendered(LoadResult& r) { return RenderDiagnostics(r.diagnostics, r.sources); }

}  // namespace

TEST_CASE("a sensitive variable's value in a variable file never shows in an excerpt") {
  ClearSecretsForTesting();
  TempDir dir;
  WriteFile(dir.path() + "/stack/main.yaml",
            "kind: variable\nname: n\ntype: number\nsensitive: true\ndefault: 1\n---\n"
            "kind: variable\nname: pin\ntype: number\nsensitive: true\ndefault: 2\n---\n"
            "kind: variable\nname: size\ntype: number\ndefault: 3\n");
  WriteFile(dir.path() + "/values.yaml", "n: Sekr1tFile\npin: abc\nsize: big\n");
  auto o = Options(dir.path() + "/stack");
  o.var_files = {dir.path() + "/values.yaml"};
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 3);
  for (const auto& d : r.diagnostics) CHECK(d.code == "invalid_variable_value");
  std::string out = Rendered(r);
  INFO(out);
  CHECK(out.find("Sekr1tFile") == std::string::npos);
  // Too short for the redactor, hidden all the same.
  CHECK(out.find("pin: abc") == std::string::npos);
  CHECK(out.find("pin: [REDACTED]") != std::string::npos);
  CHECK(out.find("n: [REDACTED]") != std::string::npos);
  CHECK(out.find("size: big") != std::string::npos);  // not sensitive: shown
  // And a message that would quote it says [REDACTED].
  CHECK(Redact("it was Sekr1tFile") == "it was [REDACTED]");
  ClearSecretsForTesting();
}
