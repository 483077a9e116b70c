// cairn validate, graph and schema through the real binary.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "tests/support/process.h"

namespace manifest_commands_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

const char* kStack =
    "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n---\n"
    "kind: instance\nname: web\ncount: 2\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: "
    "debian-12, network: "
    "\"${network.n.id}\"}\n";

std::map<std::string, std::string> Env() { return {{"NO_COLOR", "1"}}; }

}  // namespace

TEST_CASE("cairn validate prints a one-line summary and exits 0 for a valid stack") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml", kStack);
  WriteFile(dir.path() + "/more.yml", "kind: variable\nname: unused\ndefault: x\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 0);
  CHECK(r.out == "Valid: 3 resources (2 instance, 1 network) in 2 files.\n");
  CHECK(r.err.empty());
}

TEST_CASE("cairn validate defaults to the current directory") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml", kStack);
  auto r = RunCairn({"validate"}, Env(), "", dir.path());
  CHECK(r.exit_code == 0);
  CHECK(r.out == "Valid: 3 resources (2 instance, 1 network) in 1 file.\n");
}

TEST_CASE("cairn validate exits 1 with compiler-style diagnostics and a caret") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: instance\nname: web\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: "
            "debian-12, nmae: x}\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        dir.path() +
            "/main.yaml:3:65: error: unknown field \"nmae\" in instance spec [unknown_field]\n"
            "    spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12, nmae: x}\n"
            "                                                                    ^~~~\n"
            "  did you mean \"name\"?\n"
            "1 error, 0 warnings\n");
}

TEST_CASE("cairn validate --json prints the result and diagnostics as JSON") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: network\nname: n\nspec: {region: eu, cidr: 10.0.0.0/40}\n");
  auto r = RunCairn({"validate", "--json", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("\"valid\": false") != std::string::npos);
  CHECK(r.out.find("\"code\": \"invalid_format\"") != std::string::npos);
  CHECK(r.out.find("\"line\": 3") != std::string::npos);
  WriteFile(dir.path() + "/main.yaml", kStack);
  r = RunCairn({"validate", "--json", dir.path()}, Env());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"valid\": true") != std::string::npos);
  CHECK(r.out.find("\"resources\": 3") != std::string::npos);
}

TEST_CASE("cairn validate takes --var, --var-file and -r") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: variable\nname: n\ntype: number\n---\n"
            "kind: instance\nname: w\ncount: ${var.n}\nspec: {region: eu-central, plan: "
            "s-1vcpu-1gb, image: debian-12}\n");
  WriteFile(dir.path() + "/sub/net.yaml",
            "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/8}\n");
  WriteFile(dir.path() + "/vars.yaml", "n: 2\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("[missing_variable]") != std::string::npos);
  // vars.yaml sits in the stack too; put the variable file elsewhere.
  TempDir other;
  WriteFile(other.path() + "/vars.yaml", "n: 2\n");
  std::remove((dir.path() + "/vars.yaml").c_str());
  r = RunCairn({"validate", dir.path(), "--var-file", other.path() + "/vars.yaml"}, Env());
  CHECK(r.out == "Valid: 2 resources (2 instance) in 1 file.\n");
  r = RunCairn({"validate", "--var", "n=4", "-r", dir.path()}, Env());
  CHECK(r.out == "Valid: 5 resources (4 instance, 1 network) in 2 files.\n");
  r = RunCairn({"validate", "--var", "n=1", "--var-file", other.path() + "/vars.yaml", dir.path()},
               Env());
  CHECK(r.out == "Valid: 1 resource (1 instance) in 1 file.\n");
  r = RunCairn({"validate", dir.path(), "--var", "novalue"}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("expected NAME=VALUE") != std::string::npos);
}

TEST_CASE("cairn validate never prints private key material") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: ssh_key\nname: k\nspec:\n  public_key: \"-----BEGIN RSA PRIVATE "
            "KEY-----\\nMIIEsecretsecret\"\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("[private_key_material]") != std::string::npos);
  CHECK(r.err.find("MIIEsecretsecret") == std::string::npos);
}

TEST_CASE("cairn graph prints DOT by default and JSON on request") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml", kStack);
  auto r = RunCairn({"graph", dir.path()}, Env());
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("digraph cairn {\n", 0) == 0);
  CHECK(r.out.find("\"instance.web[1]\" -> \"network.n\";") != std::string::npos);
  CHECK(r.out.find("[label=\"network.n\", fillcolor=") != std::string::npos);
  r = RunCairn({"graph", dir.path(), "--format", "json"}, Env());
  CHECK(r.exit_code == 0);
  CHECK(
      r.out.find(
          "\"order\": [\n    \"network.n\",\n    \"instance.web[0]\",\n    \"instance.web[1]\"") !=
      std::string::npos);
  r = RunCairn({"graph", dir.path(), "--format", "svg"}, Env());
  CHECK(r.exit_code == 1);
}

TEST_CASE("cairn graph exits 1 on a cycle, naming it in full") {
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml",
            "kind: instance\nname: a\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: "
            "debian-12}\ndepends_on: [volume.b]\n---\n"
            "kind: volume\nname: b\nspec: {region: eu-central, size_gb: 1, instance: "
            "\"${instance.a.id}\"}\n");
  auto r = RunCairn({"graph", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("dependency cycle: instance.a -> volume.b -> instance.a [dependency_cycle]") !=
        std::string::npos);
}

TEST_CASE("cairn schema lists kinds and prints one kind's schema") {
  auto r = RunCairn({"schema"}, Env());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("  instance  ") != std::string::npos);
  CHECK(r.out.find("  ssh_key   ") != std::string::npos);
  r = RunCairn({"schema", "network"}, Env());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"x-cairn\"") != std::string::npos);
  CHECK(r.out.find("\"/api/v1/networking\"") != std::string::npos);
  r = RunCairn({"schema", "netwrok"}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("did you mean \"network\"?") != std::string::npos);
}

TEST_CASE("cairn reads the schemas compiled into it and never a schema directory") {
  // CAIRN_SCHEMA_DIR once chose the directory the engine read; a directory
  // it names, even one that does not exist, must change nothing now.
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml", kStack);
  const std::map<std::string, std::string> env = {{"CAIRN_SCHEMA_DIR", dir.path() + "/none"},
                                                  {"NO_COLOR", "1"}};
  auto r = RunCairn({"schema", "volume"}, env);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"sizeGb\"") != std::string::npos);
  r = RunCairn({"validate", dir.path()}, env);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "Valid: 3 resources (2 instance, 1 network) in 1 file.\n");
}

TEST_CASE(
    "cairn validate keeps its output small and free of raw control bytes, whatever the input") {
  TempDir dir;
  // A 50 MB string (its diagnostic printed 52 MB) and terminal escapes.
  WriteFile(dir.path() + "/main.yaml",
            "kind: network\nname: n\nspec:\n  region: eu\n  cidr: 10.0.0.0/16\n  colour: \"" +
                std::string(50'000'000, 'x') +
                "\"\n---\nkind: network\nname: \"m\x1b[31m\"\n"
                "spec: {region: \"\x1b]0;pwned\x07\", cidr: 10.0.0.0/16}\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.size() < 4000);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x07') == std::string::npos);
  CHECK(r.err.find("\\x1b[31m") != std::string::npos);
  CHECK(r.err.find("main.yaml:6:3: error: unknown field \"colour\"") != std::string::npos);
}

TEST_CASE("cairn validate of a manifest with a million interpolations is linear, not quadratic") {
  // Each expression once re-read the whole line to point at itself: 200,000
  // of them took 51 s. A million would take about 20 minutes that way, past
  // the test's timeout; linear, it takes a second or two. No time is
  // asserted here: the timeout is what fails a regression.
  TempDir dir;
  std::string many;
  for (int i = 0; i < 1'000'000; ++i) many += "${var.v}";
  WriteFile(dir.path() + "/main.yaml",
            "kind: variable\nname: v\ndefault: a\n---\nkind: network\nname: n\nspec:\n"
            "  region: eu\n  cidr: 10.0.0.0/16\n  name: \"" +
                many + "\"\n");
  auto r = RunCairn({"validate", dir.path()}, Env());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("must be at most") != std::string::npos);
}

TEST_CASE("cairn fmt rewrites manifests in place, --check lists them and exits 1") {
  TempDir dir;
  const std::string file = dir.path() + "/main.yaml";
  const std::string messy =
      "kind:   network   \nname: app\nspec:\n    region: eu-central   # where\n"
      "    cidr:  10.0.0.0/16\n\n\n";
  WriteFile(file, messy);
  WriteFile(dir.path() + "/other.yml", "kind: ssh_key\nname: k\n");  // already canonical
  auto check = RunCairn({"fmt", "--check", dir.path()});
  CHECK(check.exit_code == 1);
  CHECK(check.out == file + "\n");
  std::ifstream before(file);
  CHECK(std::string((std::istreambuf_iterator<char>(before)), std::istreambuf_iterator<char>()) ==
        messy);  // --check changes nothing

  auto fmt = RunCairn({"fmt", dir.path()});
  CHECK(fmt.exit_code == 0);
  CHECK(fmt.out == "formatted " + file + "\n");
  std::ifstream after(file);
  CHECK(std::string((std::istreambuf_iterator<char>(after)), std::istreambuf_iterator<char>()) ==
        "kind: network\nname: app\nspec:\n  region: eu-central   # where\n  cidr: 10.0.0.0/16\n");
  CHECK(RunCairn({"fmt", "--check", dir.path()}).exit_code == 0);

  // Invalid YAML: an error naming the file, which is left alone.
  WriteFile(file, "kind: [oops\n");
  auto bad = RunCairn({"fmt", file});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find(file) != std::string::npos);
  // The repository's own examples are canonical.
  CHECK(RunCairn({"fmt", "--check", "-r", std::string(CAIRN_SOURCE_DIR) + "/examples"}).exit_code ==
        0);
}

}  // namespace manifest_commands_test
