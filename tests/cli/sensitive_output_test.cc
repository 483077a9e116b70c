// Secrets as users meet them: the real `cairn` binary against a real
// `cairn serve` on loopback, state in a real SQLite file. A value built from
// a sensitive variable stays sensitive through outputs, module outputs, the
// state, `cairn output` and a saved plan; a private key assembled from
// variables is refused by every command; a sensitive value in a variable
// file is never shown in a diagnostic.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace sensitive_output_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

constexpr const char* kSecret = "sekr1t-value-42";

// A sensitive variable, and a network named from it: a resource attribute
// built from a sensitive value, as outputs are below.
std::string SecretStack(const std::string& outputs) {
  return std::string("kind: variable\nname: s\ntype: string\nsensitive: true\ndefault: ") +
         kSecret +
         "\n---\n"
         "kind: network\nname: app\nspec: {name: \"net-${var.s}\", region: eu-central, cidr: "
         "10.30.0.0/16}\n---\n" +
         outputs;
}

const char* kKeyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";

struct Env {
  ServeFixture server;
  TempDir dir;
  std::string stack;
  std::map<std::string, std::string> env;

  Env() {
    stack = dir.path() + "/stack";
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  }
  CommandResult Cairn(std::vector<std::string> args) { return RunCairn(args, env); }
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("an output built from a sensitive variable is refused unless declared sensitive") {
  Env e;
  // Two outputs (their values on lines 13 and 17): the variable, and a
  // string built from it.
  WriteFile(e.stack + "/main.yaml",
            SecretStack("kind: output\nname: o\nvalue: ${var.s}\n---\n"
                        "kind: output\nname: n\nvalue: \"net-${var.s}\"\n"));
  for (const char* command : {"validate", "plan", "apply"}) {
    std::vector<std::string> args{command, e.stack};
    if (std::string(command) == "apply") args.push_back("--auto-approve");
    auto r = e.Cairn(args);
    INFO(command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("main.yaml:13:8: error: output \"o\" is built from sensitive variable "
                     "\"s\", so it must be declared sensitive [output_not_sensitive]") !=
          std::string::npos);
    CHECK(r.err.find("main.yaml:17:8: error: output \"n\" is built from sensitive variable "
                     "\"s\"") != std::string::npos);
    CHECK((r.out + r.err).find(kSecret) == std::string::npos);
  }
  auto none = e.Cairn({"output", e.stack});
  CHECK(none.err.find("no outputs recorded") != std::string::npos);
}

TEST_CASE("an output declared sensitive stays sensitive in apply, the state, output and plans") {
  Env e;
  WriteFile(e.stack + "/main.yaml",
            SecretStack("kind: output\nname: o\nsensitive: true\nvalue: ${var.s}\n---\n"
                        "kind: output\nname: n\nsensitive: true\nvalue: \"net-${var.s}\"\n---\n"
                        "kind: output\nname: plain\nvalue: hello\n"));
  const std::string planfile = e.dir.path() + "/first.plan";
  auto plan = e.Cairn({"plan", e.stack, "--out", planfile});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find("+ o = (sensitive)") != std::string::npos);
  CHECK(plan.out.find(kSecret) == std::string::npos);
  // The saved plan records both as sensitive (it holds the values: it is
  // what apply runs).
  json saved = json::parse(ReadAll(planfile));
  std::map<std::string, bool> marked;
  for (const auto& o : saved["outputs"]) marked[o["name"]] = o["sensitive"];
  CHECK(marked == std::map<std::string, bool>{{"n", true}, {"o", true}, {"plain", false}});
  auto printed = e.Cairn({"plan", e.stack, "--json"});
  REQUIRE(printed.exit_code == 0);
  CHECK(printed.out.find(kSecret) == std::string::npos);

  auto apply = e.Cairn({"apply", planfile});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(apply.out.find("o = (sensitive)") != std::string::npos);
  CHECK(apply.out.find("n = (sensitive)") != std::string::npos);
  CHECK((apply.out + apply.err).find(kSecret) == std::string::npos);

  auto all = e.Cairn({"output", e.stack});
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("o = (sensitive)\n") != std::string::npos);
  CHECK(all.out.find("n = (sensitive)\n") != std::string::npos);
  CHECK(all.out.find("plain = \"hello\"\n") != std::string::npos);
  CHECK(all.out.find(kSecret) == std::string::npos);
  auto one = e.Cairn({"output", "n", e.stack});
  CHECK(one.exit_code == 1);
  CHECK(one.err.find("--show-sensitive") != std::string::npos);
  CHECK((one.out + one.err).find(kSecret) == std::string::npos);

  // --json: marked, and no plaintext unless asked for.
  auto j = e.Cairn({"output", e.stack, "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find(kSecret) == std::string::npos);
  json parsed = json::parse(j.out);
  CHECK(parsed["o"] == json({{"value", "(sensitive)"}, {"sensitive", true}}));
  CHECK(parsed["n"] == json({{"value", "(sensitive)"}, {"sensitive", true}}));
  CHECK(parsed["plain"] == json({{"value", "hello"}, {"sensitive", false}}));
  // Asked for: by name, or with --show-sensitive.
  CHECK(e.Cairn({"output", "n", e.stack, "--json"}).out ==
        "\"net-" + std::string(kSecret) + "\"\n");
  CHECK(e.Cairn({"output", "n", e.stack, "--show-sensitive"}).out ==
        "net-" + std::string(kSecret) + "\n");
  json shown = json::parse(e.Cairn({"output", e.stack, "--json", "--show-sensitive"}).out);
  CHECK(shown["o"] == json({{"value", kSecret}, {"sensitive", true}}));

  // Removed from the manifests, a sensitive output's last value is still
  // not shown by the plan that deletes it.
  WriteFile(e.stack + "/main.yaml", SecretStack("kind: output\nname: plain\nvalue: hello\n"));
  auto gone = e.Cairn({"plan", e.stack, "--json"});
  INFO(gone.out << gone.err);
  REQUIRE(gone.exit_code == 0);
  CHECK(gone.out.find(kSecret) == std::string::npos);
  json changes = json::parse(gone.out)["output_changes"];
  REQUIRE(changes.size() == 2);
  for (const auto& c : changes) {
    CHECK(c["action"] == "delete");
    CHECK(c["sensitive"] == true);
  }
}

TEST_CASE("a module input built from a sensitive variable makes the module's outputs sensitive") {
  Env e;
  WriteFile(e.stack + "/modules/db/main.yaml",
            "kind: variable\nname: password\ntype: string\n---\n"
            "kind: output\nname: dsn\nvalue: \"db://admin:${var.password}@db\"\n");
  WriteFile(e.stack + "/main.yaml",
            SecretStack("kind: module\nname: db\nsource: ./modules/db\n"
                        "inputs: {password: \"${var.s}\"}\n---\n"
                        "kind: output\nname: conn\nsensitive: true\nvalue: ${module.db.dsn}\n"));
  auto refused = e.Cairn({"validate", e.stack});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("modules/db/main.yaml:7:8: error: output \"dsn\" is built from variable "
                         "\"password\", whose input is built from sensitive variable \"s\", so it "
                         "must be declared sensitive [output_not_sensitive]") != std::string::npos);
  CHECK((refused.out + refused.err).find(kSecret) == std::string::npos);

  WriteFile(e.stack + "/modules/db/main.yaml",
            "kind: variable\nname: password\ntype: string\n---\n"
            "kind: output\nname: dsn\nsensitive: true\nvalue: \"db://admin:${var.password}@db\"\n");
  auto apply = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(apply.out.find("conn = (sensitive)") != std::string::npos);
  CHECK((apply.out + apply.err).find(kSecret) == std::string::npos);
  auto out = e.Cairn({"output", e.stack, "--json"});
  CHECK(json::parse(out.out)["conn"]["sensitive"] == true);
  CHECK(out.out.find(kSecret) == std::string::npos);
}

TEST_CASE("a private key assembled from variables into an output is refused by every command") {
  Env e;
  // Neither half is a key; together they are.
  WriteFile(e.stack + "/main.yaml",
            "kind: variable\nname: p1\ndefault: \"-----BEGIN OPENSSH PRIV\"\n---\n"
            "kind: variable\nname: p2\ndefault: \"ATE KEY-----\\n" +
                std::string(kKeyBody) +
                "\\n-----END OPENSSH PRIVATE KEY-----\\n\"\n---\n"
                "kind: output\nname: o\nvalue: \"${var.p1}${var.p2}\"\n");
  for (const char* command : {"validate", "plan", "apply"}) {
    std::vector<std::string> args{command, e.stack};
    if (std::string(command) == "apply") args.push_back("--auto-approve");
    auto r = e.Cairn(args);
    INFO(command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("main.yaml:11:9: error: private key material in a value "
                     "[private_key_material]") != std::string::npos);
    CHECK((r.out + r.err).find(kKeyBody) == std::string::npos);
    CHECK((r.out + r.err).find("ATE KEY") == std::string::npos);
  }
  auto out = e.Cairn({"output", e.stack, "--json", "--show-sensitive"});
  CHECK(out.out.find(kKeyBody) == std::string::npos);
  auto pulled = e.Cairn({"state", "pull", e.stack});
  CHECK(pulled.out.find(kKeyBody) == std::string::npos);
}

TEST_CASE("a sensitive variable's value in a --var-file is not shown in a type error") {
  Env e;
  WriteFile(e.stack + "/main.yaml",
            "kind: variable\nname: n\ntype: number\nsensitive: true\ndefault: 1\n");
  const std::string file = e.dir.path() + "/values.yaml";
  WriteFile(file, "n: Sekr1tFile\n");
  auto r = e.Cairn({"validate", e.stack, "--var-file", file});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("values.yaml:1:4: error: value of variable \"n\" must be a number, not a "
                   "string [invalid_variable_value]") != std::string::npos);
  CHECK((r.out + r.err).find("Sekr1tFile") == std::string::npos);
  // As with --var and CAIRN_VAR_.
  auto var = e.Cairn({"validate", e.stack, "--var", "n=Sekr1tFile"});
  CHECK(var.exit_code == 1);
  CHECK((var.out + var.err).find("Sekr1tFile") == std::string::npos);
  auto json_out = e.Cairn({"validate", e.stack, "--var-file", file, "--json"});
  CHECK(json_out.exit_code == 1);
  CHECK((json_out.out + json_out.err).find("Sekr1tFile") == std::string::npos);
}

}  // namespace sensitive_output_test
