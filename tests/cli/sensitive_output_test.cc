// Secrets as users meet them: the real `cairn` binary against a real
// `cairn serve` on loopback. A sensitive value in a variable file is never
// shown in a diagnostic.
#include <catch2/catch.hpp>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

using namespace cairn::testing;

namespace {

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

}  // namespace

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
