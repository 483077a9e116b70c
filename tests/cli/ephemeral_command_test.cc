// Ephemeral variables and write-only fields as users meet them: the real
// `cairn` binary against a real `cairn serve`, state in a real SQLite file.
// The value of an ephemeral variable, handed to an instance as its user
// data, is in no file Cairn writes: the state database, saved plans, the
// JSON, HTML and Markdown plans, and the logs at trace level of both the
// engine and the server. A saved plan is applied with it given again.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace ephemeral_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

constexpr const char* kSecret = "hunter2-ephemeral-0451";

const char* kStack =
    "kind: variable\nname: root_password\ntype: string\nephemeral: true\n---\n"
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.40.0.0/16}\n---\n"
    "kind: instance\nname: web\nspec:\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
    "  image: debian-12\n  network: ${network.core.id}\n"
    "  user_data: \"#cloud-config\\nchpasswd: {list: 'root:${var.root_password}'}\\n"
    "network: ${network.core.id}\"\n";

struct Env {
  ServeFixture server{{"--log-level", "trace"}};
  TempDir dir;
  std::string stack;
  std::map<std::string, std::string> env;

  Env() {
    stack = dir.path() + "/stack";
    WriteFile(stack + "/main.yaml", kStack);
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  }
  CommandResult Cairn(std::vector<std::string> args) {
    args.insert(args.begin(), {"--log-level", "trace"});
    return RunCairn(args, env);
  }
};

// The files under `dir` that hold `needle`, by path.
std::vector<std::string> FilesHolding(const std::string& dir, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && ReadFile(e.path().string()).find(needle) != std::string::npos) {
      out.push_back(e.path().string());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("an ephemeral value reaches the API and no file Cairn writes") {
  Env e;
  const std::string planfile = e.dir.path() + "/web.plan";
  const std::string html = e.dir.path() + "/web.html";
  const std::string var = std::string("root_password=") + kSecret;

  auto plan = e.Cairn({"plan", e.stack, "--var", var, "--out", planfile, "--html", html});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find("user_data: (write-only value)") != std::string::npos);
  auto saved = json::parse(ReadFile(planfile));
  CHECK(saved["ephemeral_variables"] == json::array({"root_password"}));
  CHECK_FALSE(saved["variables"].contains("root_password"));
  auto as_json = e.Cairn({"plan", e.stack, "--var", var, "--json"});
  auto as_markdown = e.Cairn({"plan", e.stack, "--var", var, "--markdown"});
  REQUIRE(as_json.exit_code == 0);
  REQUIRE(as_markdown.exit_code == 0);

  // Applied without it, the saved plan is refused, naming what it needs.
  auto missing = e.Cairn({"apply", planfile});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("the plan was made with ephemeral variable \"root_password\", whose "
                         "value no plan keeps: give it again (CAIRN_VAR_root_password or --var "
                         "root_password=VALUE)") != std::string::npos);
  // Only ephemeral variables are given again.
  auto other = e.Cairn({"apply", planfile, "--var", var, "--var", "nope=1"});
  CHECK(other.exit_code == 1);
  CHECK(other.err.find("--var nope cannot be given with a saved plan") != std::string::npos);

  auto apply = e.Cairn({"apply", planfile, "--var", var});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(apply.out.find("2 added") != std::string::npos);

  // The instance exists, and the API never shows its user data.
  auto list = e.server.Client()->Get("/api/v1/compute");
  REQUIRE(list.status == 200);
  REQUIRE(list.json()["data"].size() == 1);
  CHECK(list.body.find(kSecret) == std::string::npos);

  // A plan after it: nothing to do (a write-only field is never compared).
  auto again = e.Cairn({"plan", e.stack, "--var", var, "--detailed-exitcode"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  auto show = e.Cairn({"show", e.stack, "--json"});
  auto state_show = e.Cairn({"state", "show", "instance.web", e.stack});
  CHECK(state_show.exit_code == 0);
  CHECK_FALSE(json::parse(state_show.out)["attributes"].contains("user_data"));

  for (const CommandResult* r :
       {&plan, &as_json, &as_markdown, &missing, &other, &apply, &again, &show, &state_show}) {
    CHECK(r->out.find(kSecret) == std::string::npos);
    CHECK(r->err.find(kSecret) == std::string::npos);
  }
  CHECK(FilesHolding(e.dir.path(), kSecret).empty());
  CHECK(FilesHolding(e.server.data_dir(), kSecret).empty());
  CHECK(e.server.process().Stderr().find(kSecret) == std::string::npos);
}

TEST_CASE("an ephemeral variable in a field the state keeps stops every command") {
  Env e;
  WriteFile(e.stack + "/main.yaml",
            "kind: variable\nname: pw\ntype: string\nephemeral: true\n---\n"
            "kind: network\nname: core\nspec: {name: \"core-${var.pw}\", region: eu-central, "
            "cidr: 10.40.0.0/16}\n");
  for (const char* command : {"validate", "plan", "apply"}) {
    std::vector<std::string> args{command, e.stack, "--var", std::string("pw=") + kSecret};
    if (std::string(command) == "apply") args.push_back("--auto-approve");
    auto r = e.Cairn(args);
    INFO(command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("main.yaml:8:") != std::string::npos);
    CHECK(r.err.find("ephemeral variable \"pw\" cannot be used in field \"name\" of network "
                     "\"core\"") != std::string::npos);
    CHECK(r.err.find("[ephemeral_not_allowed]") != std::string::npos);
    CHECK((r.out + r.err).find(kSecret) == std::string::npos);
  }
  CHECK(e.server.Client()->Get("/api/v1/networking").json()["data"].empty());
}

}  // namespace ephemeral_command_test
