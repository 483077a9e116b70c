// Secrets through the loader: the sensitive mark follows a value from a
// sensitive variable into outputs, module inputs and module outputs (an
// output must be declared sensitive to carry it), private key material
// assembled from pieces is refused wherever the pieces meet, and a sensitive
// variable's value in a variable file never shows in an excerpt.
#include <catch2/catch.hpp>

#include "base/redact.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace sensitive_test {  // one namespace per test file: see tests/CMakeLists.txt

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

LoadResult Load(const std::string& yaml) {
  LoadOptions o = Options("");
  o.paths.clear();
  return LoadStackFromText({{"main.yaml", yaml}}, o);
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

const OutputConfig* FindOutput(const StackConfig& c, const std::string& name) {
  for (const auto& o : c.outputs) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const char* kSecretVar =
    "kind: variable\nname: s\ntype: string\nsensitive: true\ndefault: Sekr1tValue\n";

const char* kKeyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";

// The two halves of an OpenSSH private key, as variable defaults: neither
// holds a key marker, their concatenation does.
std::string KeyHalves() {
  return "kind: variable\nname: p1\ndefault: \"-----BEGIN OPENSSH PRIV\"\n---\n"
         "kind: variable\nname: p2\ndefault: \"ATE KEY-----\\n" +
         std::string(kKeyBody) + "\\n-----END OPENSSH PRIVATE KEY-----\\n\"\n";
}

}  // namespace

TEST_CASE("an output built from a sensitive variable must be declared sensitive") {
  for (const std::string value : {"${var.s}", "\"net-${var.s}\"", "[a, \"${var.s}\"]"}) {
    DYNAMIC_SECTION(value) {
      auto r = Load(std::string(kSecretVar) + "---\nkind: output\nname: o\nvalue: " + value + "\n");
      INFO(Codes(r));
      REQUIRE(r.diagnostics.size() == 1);
      const Diagnostic& d = r.diagnostics[0];
      CHECK(d.code == "output_not_sensitive");
      CHECK(
          d.summary ==
          "output \"o\" is built from sensitive variable \"s\", so it must be declared sensitive");
      // At the output's value.
      CHECK(d.location.file == "main.yaml");
      CHECK(d.location.line == 9);
      CHECK(d.location.column == 8);
      CHECK(d.detail.find("sensitive: true") != std::string::npos);
      // The mark follows the value even so.
      REQUIRE(FindOutput(r.config, "o"));
      CHECK(FindOutput(r.config, "o")->sensitive);
      CHECK(Rendered(r).find("Sekr1tValue") == std::string::npos);
    }
  }
  // sensitive: false says the opposite of what the value is: refused too.
  auto no = Load(std::string(kSecretVar) +
                 "---\nkind: output\nname: o\nsensitive: false\nvalue: ${var.s}\n");
  CHECK(Codes(no).find("output_not_sensitive") != std::string::npos);
}

TEST_CASE("an output declared sensitive may hold a sensitive value, and others are left alone") {
  auto r = Load(std::string(kSecretVar) +
                "---\nkind: variable\nname: plain\ndefault: hello\n---\n"
                "kind: output\nname: o\nsensitive: true\nvalue: \"net-${var.s}\"\n---\n"
                "kind: output\nname: p\nvalue: ${var.plain}\n");
  INFO(Codes(r));
  REQUIRE(r.ok());
  REQUIRE(FindOutput(r.config, "o"));
  CHECK(FindOutput(r.config, "o")->sensitive);
  CHECK_FALSE(FindOutput(r.config, "p")->sensitive);
}

TEST_CASE("a module input built from a sensitive value makes the module's variable sensitive") {
  TempDir dir;
  WriteFile(dir.path() + "/modules/db/main.yaml",
            "kind: variable\nname: password\ntype: string\n---\n"
            "kind: output\nname: dsn\nvalue: \"db://admin:${var.password}@db\"\n---\n"
            "kind: output\nname: hidden\nsensitive: true\nvalue: ${var.password}\n");
  WriteFile(dir.path() + "/main.yaml",
            std::string(kSecretVar) +
                "---\nkind: module\nname: db\nsource: ./modules/db\n"
                "inputs:\n  password: \"pre-${var.s}\"\n---\n"
                "kind: output\nname: conn\nvalue: ${module.db.hidden}\n");
  auto r = LoadStack(Options(dir.path()));
  INFO(Codes(r));
  // In the module: its output built from the variable is refused, naming
  // where the value came from; the one declared sensitive is not.
  std::string codes = Codes(r);
  CHECK(codes.find(dir.path() +
                   "/modules/db/main.yaml:7:8: output_not_sensitive: output \"dsn\" "
                   "is built from variable \"password\", whose input is built from sensitive "
                   "variable \"s\", so it must be declared sensitive") != std::string::npos);
  // In the stack: an output of the module's sensitive output, the same.
  CHECK(codes.find(dir.path() +
                   "/main.yaml:15:8: output_not_sensitive: output \"conn\" is built "
                   "from sensitive output module.db.hidden, so it must be declared sensitive") !=
        std::string::npos);
  CHECK(r.diagnostics.size() == 2);
  REQUIRE(FindOutput(r.config, "conn"));
  CHECK(FindOutput(r.config, "conn")->sensitive);

  // Declared sensitive where they are built from sensitive values: valid.
  WriteFile(dir.path() + "/modules/db/main.yaml",
            "kind: variable\nname: password\ntype: string\n---\n"
            "kind: output\nname: dsn\nsensitive: true\nvalue: \"db://admin:${var.password}@db\"\n");
  WriteFile(dir.path() + "/main.yaml",
            std::string(kSecretVar) +
                "---\nkind: module\nname: db\nsource: ./modules/db\n"
                "inputs:\n  password: \"pre-${var.s}\"\n---\n"
                "kind: output\nname: conn\nsensitive: true\nvalue: \"x ${module.db.dsn}\"\n");
  auto ok = LoadStack(Options(dir.path()));
  INFO(Codes(ok));
  REQUIRE(ok.ok());
  REQUIRE(FindOutput(ok.config, "conn"));
  CHECK(FindOutput(ok.config, "conn")->sensitive);
}

TEST_CASE("a sensitive module output passed on through another module's input stays sensitive") {
  TempDir dir;
  WriteFile(dir.path() + "/modules/secret/main.yaml",
            "kind: variable\nname: v\n---\n"
            "kind: output\nname: token\nsensitive: true\nvalue: ${var.v}\n");
  WriteFile(dir.path() + "/modules/relay/main.yaml",
            "kind: variable\nname: given\n---\n"
            "kind: output\nname: again\nvalue: \"relayed ${var.given}\"\n");
  WriteFile(dir.path() + "/main.yaml",
            "kind: module\nname: secret\nsource: ./modules/secret\ninputs: {v: abcdefgh}\n---\n"
            "kind: module\nname: relay\nsource: ./modules/relay\n"
            "inputs: {given: \"${module.secret.token}\"}\n");
  auto r = LoadStack(Options(dir.path()));
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "output_not_sensitive");
  CHECK(r.diagnostics[0].location.file == dir.path() + "/modules/relay/main.yaml");
  CHECK(r.diagnostics[0].summary.find("sensitive output module.secret.token") != std::string::npos);
}

TEST_CASE("a private key assembled from variables into an output is refused, and kept out") {
  auto r = Load(KeyHalves() + "---\nkind: output\nname: o\nvalue: \"${var.p1}${var.p2}\"\n");
  INFO(Codes(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "private_key_material");
  CHECK(r.diagnostics[0].location.line == 11);
  REQUIRE(FindOutput(r.config, "o"));
  CHECK(FindOutput(r.config, "o")->value.dump().find(kKeyBody) == std::string::npos);
  std::string out = Rendered(r);
  CHECK(out.find(kKeyBody) == std::string::npos);
  // What fed it is hidden from every excerpt.
  CHECK(r.sources.Line("main.yaml", 7) == kRedactedLine);
  CHECK(r.sources.Line("main.yaml", 3) == kRedactedLine);
}

TEST_CASE("a private key assembled in a module input, or from module outputs, is refused") {
  TempDir dir;
  WriteFile(dir.path() + "/modules/m/main.yaml",
            "kind: variable\nname: k\n---\n"
            "kind: variable\nname: a\ndefault: x\n---\n"
            "kind: variable\nname: b\ndefault: y\n---\n"
            "kind: output\nname: head\nvalue: ${var.a}\n---\n"
            "kind: output\nname: tail\nvalue: ${var.b}\n");
  WriteFile(dir.path() + "/main.yaml",
            KeyHalves() +
                "---\nkind: module\nname: m\nsource: ./modules/m\n"
                "inputs:\n  k: \"${var.p1}${var.p2}\"\n  a: ${var.p1}\n  b: ${var.p2}\n---\n"
                "kind: output\nname: joined\nvalue: \"${module.m.head}${module.m.tail}\"\n");
  auto r = LoadStack(Options(dir.path()));
  INFO(Codes(r));
  std::string codes = Codes(r);
  // The input where the halves meet (line 13), and the output where the
  // module's outputs do (line 19).
  CHECK(codes.find(dir.path() + "/main.yaml:13:7: private_key_material") != std::string::npos);
  CHECK(codes.find(dir.path() + "/main.yaml:19:8: private_key_material") != std::string::npos);
  CHECK(r.diagnostics.size() == 2);
  REQUIRE(FindOutput(r.config, "joined"));
  CHECK(FindOutput(r.config, "joined")->value.dump().find(kKeyBody) == std::string::npos);
  CHECK(Rendered(r).find(kKeyBody) == std::string::npos);
}

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

}  // namespace sensitive_test
