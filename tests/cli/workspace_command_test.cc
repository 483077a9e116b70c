// `cairn workspace` and --workspace / CAIRN_WORKSPACE as users run them: the
// real `cairn` binary against a real `cairn serve` on loopback, each
// workspace's state in a SQLite file of its own.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/support/stack_env.h"

namespace workspace_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

// One network and ${workspace}-dependent instances: three in prod, one
// elsewhere, each named after its workspace.
constexpr const char* kWorkspaceStack =
    "kind: network\nname: app\nspec: {name: 'net-${workspace}', region: eu-central, cidr: "
    "10.30.0.0/16}\n---\n"
    "kind: instance\nname: web\ncount: '${workspace == \"prod\" ? 3 : 1}'\n"
    "spec:\n  name: web-${workspace}-${count.index}\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
    "  image: debian-12\n  network: ${network.app.id}\n"
    "---\nkind: output\nname: where\nvalue: ${workspace}\n";

struct WorkspaceEnv : StackEnv {
  WorkspaceEnv() {
    std::filesystem::remove(stack + "/main.yaml");
    WriteFile(stack + "/main.yaml", kWorkspaceStack);
    env["CAIRN_WORKSPACE"] = "";  // unset: the tests set it where they mean to
  }
  CommandResult Ok(std::vector<std::string> args) {
    auto r = Cairn(args);
    INFO(args[0] << ": " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  }
};

}  // namespace

TEST_CASE("workspace: new select list show and delete") {
  WorkspaceEnv e;
  CHECK(e.Ok({"workspace", "show", e.stack}).out == "default\n");
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "* default\n");

  auto made = e.Ok({"workspace", "new", "staging", e.stack});
  CHECK(made.out == "Created and selected workspace \"staging\".\n");
  CHECK(std::filesystem::exists(e.stack + "/.cairn/workspaces/staging/state.db"));
  CHECK(e.Ok({"workspace", "show", e.stack}).out == "staging\n");
  e.Ok({"workspace", "new", "dev", e.stack});
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "  default\n* dev\n  staging\n");

  auto again = e.Cairn({"workspace", "new", "dev", e.stack});
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("already exists") != std::string::npos);

  CHECK(e.Ok({"workspace", "select", "staging", e.stack}).out ==
        "Switched to workspace \"staging\".\n");
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "  default\n  dev\n* staging\n");

  auto unknown = e.Cairn({"workspace", "select", "qa", e.stack});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("unknown workspace \"qa\"; the workspaces are default, dev, staging") !=
        std::string::npos);
  CHECK(e.Ok({"workspace", "select", "--or-create", "qa", e.stack}).out ==
        "Created and selected workspace \"qa\".\n");

  auto bad = e.Cairn({"workspace", "new", "Prod EU", e.stack});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("invalid workspace name \"Prod EU\"") != std::string::npos);

  // Not the current one, never default.
  auto current = e.Cairn({"workspace", "delete", "qa", e.stack});
  CHECK(current.exit_code == 1);
  CHECK(current.err.find("is the current one") != std::string::npos);
  auto def = e.Cairn({"workspace", "delete", "default", e.stack});
  CHECK(def.exit_code == 1);
  CHECK(def.err.find("cannot be deleted") != std::string::npos);

  e.Ok({"workspace", "select", "default", e.stack});
  CHECK(e.Ok({"workspace", "delete", "qa", e.stack}).out == "Deleted workspace \"qa\".\n");
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "* default\n  dev\n  staging\n");
  CHECK_FALSE(std::filesystem::exists(e.stack + "/.cairn/workspaces/qa"));
}

TEST_CASE("workspace: apply in two workspaces makes two sets of resources") {
  WorkspaceEnv e;
  e.Ok({"workspace", "new", "prod", e.stack});
  e.Ok({"apply", "--auto-approve", e.stack});  // prod, the selected one
  e.Ok({"workspace", "new", "dev", e.stack});
  e.Ok({"apply", "--auto-approve", e.stack});  // dev
  e.Ok({"apply", "--auto-approve", "--workspace", "default", e.stack});

  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-default-0", "web-dev-0",
                                                               "web-prod-0", "web-prod-1",
                                                               "web-prod-2"});
  CHECK(e.Names("/api/v1/networking") ==
        std::vector<std::string>{"net-default", "net-dev", "net-prod"});

  // Each state holds its own workspace's, and ${workspace} is its name.
  CHECK(e.Ok({"output", "where", e.stack}).out.find("dev") != std::string::npos);
  CHECK(e.Ok({"output", "where", "--workspace", "prod", e.stack}).out.find("prod") !=
        std::string::npos);
  auto prod_list = e.Ok({"state", "list", "--workspace", "prod", e.stack});
  CHECK(prod_list.out.find("instance.web[2]") != std::string::npos);
  auto dev_list = e.Ok({"state", "list", e.stack});
  CHECK(dev_list.out.find("instance.web[0]") != std::string::npos);
  CHECK(dev_list.out.find("instance.web[1]") == std::string::npos);

  // Nothing to do in any of them.
  for (const char* ws : {"default", "dev", "prod"}) {
    auto plan = e.Cairn({"plan", "--detailed-exitcode", "--workspace", ws, e.stack});
    INFO(ws << ": " << plan.out << plan.err);
    CHECK(plan.exit_code == 0);
  }

  // The other workspaces' objects are not unmanaged.
  auto drift = e.Cairn({"drift", "--unmanaged", "--workspace", "default", e.stack});
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 0);

  // Destroying one workspace leaves the others' resources.
  e.Ok({"destroy", "--auto-approve", "--workspace", "prod", e.stack});
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-default-0", "web-dev-0"});
}

TEST_CASE("workspace: delete refuses a state with resources unless --force") {
  WorkspaceEnv e;
  e.Ok({"workspace", "new", "temp", e.stack});
  e.Ok({"apply", "--auto-approve", e.stack});
  e.Ok({"workspace", "select", "default", e.stack});

  auto refused = e.Cairn({"workspace", "delete", "temp", e.stack});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("still tracks 2 resources") != std::string::npos);
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "* default\n  temp\n");

  auto forced = e.Ok({"workspace", "delete", "--force", "temp", e.stack});
  CHECK(forced.err.find("2 resources, which are no longer managed") != std::string::npos);
  CHECK(e.Ok({"workspace", "list", e.stack}).out == "* default\n");
  // Forgotten, not deleted.
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-temp-0"});
}

TEST_CASE("workspace: --workspace wins over CAIRN_WORKSPACE which wins over the selection") {
  WorkspaceEnv e;
  e.Ok({"workspace", "new", "a", e.stack});
  e.Ok({"workspace", "new", "b", e.stack});
  e.Ok({"workspace", "new", "c", e.stack});  // selected: c
  auto value = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"console"});
    args.push_back(e.stack);
    auto r = e.Cairn(args, "workspace\n");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(value({}) == "\"c\"\n");
  e.env["CAIRN_WORKSPACE"] = "b";
  CHECK(value({}) == "\"b\"\n");
  CHECK(e.Ok({"workspace", "show", e.stack}).out == "b\n");
  CHECK(value({"--workspace", "a"}) == "\"a\"\n");
  e.env["CAIRN_WORKSPACE"] = "";
  CHECK(value({"--workspace", "default"}) == "\"default\"\n");
}

TEST_CASE("workspace: an unknown or invalid workspace is an error naming the known ones") {
  WorkspaceEnv e;
  e.Ok({"workspace", "new", "dev", e.stack});

  auto flag = e.Cairn({"plan", "--workspace", "prd", e.stack});
  CHECK(flag.exit_code == 1);
  CHECK(flag.err.find("unknown workspace \"prd\" (from --workspace); the workspaces are "
                      "default, dev") != std::string::npos);

  e.env["CAIRN_WORKSPACE"] = "stage";
  auto env = e.Cairn({"apply", "--auto-approve", e.stack});
  CHECK(env.exit_code == 1);
  CHECK(env.err.find("unknown workspace \"stage\" (from CAIRN_WORKSPACE)") != std::string::npos);
  // Nothing was made for it.
  CHECK_FALSE(std::filesystem::exists(e.stack + "/.cairn/workspaces/stage"));
  CHECK(e.Names("/api/v1/compute").empty());

  e.env["CAIRN_WORKSPACE"] = "Not/Valid";
  auto invalid = e.Cairn({"state", "list", e.stack});
  CHECK(invalid.exit_code == 1);
  CHECK(invalid.err.find("CAIRN_WORKSPACE: invalid workspace name") != std::string::npos);
}

TEST_CASE("workspace: a misspelt workspace in an expression suggests it") {
  WorkspaceEnv e;
  WriteFile(e.stack + "/extra.yaml", "kind: output\nname: typo\nvalue: ${workspce}\n");
  auto r = e.Cairn({"validate", e.stack});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("did you mean workspace?") != std::string::npos);
}

TEST_CASE("workspace: completion and help know the command and the flag") {
  auto bash = RunCairn({"completion", "bash"});
  REQUIRE(bash.exit_code == 0);
  CHECK(bash.out.find("workspace") != std::string::npos);
  CHECK(bash.out.find("--or-create") != std::string::npos);
  CHECK(bash.out.find("--workspace") != std::string::npos);

  auto help = RunCairn({"workspace", "--help"});
  REQUIRE(help.exit_code == 0);
  CHECK(help.out.find("cairn workspace new staging") != std::string::npos);
  auto plan_help = RunCairn({"plan", "--help"});
  CHECK(plan_help.out.find("--workspace") != std::string::npos);
  // The workspace commands take the name as their argument, not as a flag.
  auto select_help = RunCairn({"workspace", "select", "--help"});
  CHECK(select_help.out.find("--workspace") == std::string::npos);
}

TEST_CASE("workspace: a saved plan is applied in its own workspace only") {
  WorkspaceEnv e;
  e.Ok({"workspace", "new", "dev", e.stack});
  e.Ok({"workspace", "new", "prod", e.stack});
  const std::string planfile = e.stack + "/../dev.plan";
  // Made before dev has any resource: no lineage would tell it apart.
  e.Ok({"plan", "--workspace", "dev", "--out", planfile, e.stack});
  auto elsewhere = e.Cairn({"apply", planfile});  // prod is selected
  INFO(elsewhere.out << elsewhere.err);
  CHECK(elsewhere.exit_code == 1);
  CHECK(elsewhere.err.find("error: the saved plan was made for workspace \"dev\", and this apply "
                           "would use workspace \"prod\": apply it with --workspace dev") !=
        std::string::npos);
  auto listed = e.Ok({"state", "list", "--workspace", "prod", e.stack});
  CHECK(listed.out.find("instance.web") == std::string::npos);  // nothing made in prod

  auto applied = e.Cairn({"apply", planfile, "--workspace", "dev"});
  INFO(applied.out << applied.err);
  CHECK(applied.exit_code == 0);
  CHECK(e.Ok({"output", "where", "--workspace", "dev", e.stack}).out == "dev\n");
}

}  // namespace workspace_command_test
