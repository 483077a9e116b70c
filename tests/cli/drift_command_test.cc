// `cairn drift` and `cairn apply --refresh-only` as users run them, against a
// real `cairn serve`: fields lifecycle.ignore_changes names, the objects the
// stack's data sources read, other stacks' states, and taking the live
// values into the state without changing anything in the API.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/support/stack_env.h"

namespace drift_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

TEST_CASE("drift lists an ignored field apart and exits 0, and refresh-only records it") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml",
            BasicStack(2, "s-1vcpu-1gb", "lifecycle: {ignore_changes: [name]}\n"));
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  auto client = e.server.Client();
  const std::string web0 = e.StateId("instance.web[0]");
  REQUIRE(client->Patch("/api/v1/compute/" + web0, {{"name", "by-hand"}}, "rename-0").status ==
          200);

  // The plan leaves the field alone, and drift does not count it.
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
  auto drift = e.Cairn({"drift", e.stack});
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 0);
  CHECK(drift.out.find("~ name: \"web-0\" -> \"by-hand\"   # ignored: "
                       "lifecycle.ignore_changes") != std::string::npos);
  CHECK(drift.out.find("No drift.") != std::string::npos);
  auto j = json::parse(e.Cairn({"drift", e.stack, "--json"}).out);
  CHECK(j["drift"] == false);
  CHECK(j["items"][0]["type"] == "ignored");

  // Without a terminal or --auto-approve: shown, refused, nothing recorded.
  auto refused = e.Cairn({"apply", "--refresh-only", e.stack});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("~ name: \"web-0\" -> \"by-hand\"") != std::string::npos);
  CHECK(json::parse(
            e.Cairn({"state", "show", "instance.web[0]", e.stack}).out)["attributes"]["name"] ==
        "web-0");

  // The network is renamed and the key deleted outside Cairn too.
  const std::string net = e.StateId("network.app");
  REQUIRE(
      client->Patch("/api/v1/networking/" + net, {{"name", "app-renamed"}}, "rename-net").status ==
      200);
  const std::string key = e.StateId("ssh_key.deploy");
  REQUIRE(client->Delete("/v1/ssh_keys/" + key).status < 300);
  auto before = client->Get("/api/v1/compute/" + web0).json();

  auto recorded = e.Cairn({"apply", "--refresh-only", e.stack, "--auto-approve"});
  INFO(recorded.out << recorded.err);
  REQUIRE(recorded.exit_code == 0);
  CHECK(recorded.out.find("Refresh only: 2 to record with their live values, 1 to remove from the "
                          "state") != std::string::npos);
  CHECK(recorded.out.find("Refresh complete! Recorded the live values of 2 resources; removed 1") !=
        std::string::npos);
  // Recorded, and nothing changed in the API.
  auto state = e.Cairn({"state", "show", "instance.web", e.stack});
  json both = json::parse(state.out);
  REQUIRE(both.size() == 2);
  CHECK(both[0]["attributes"]["name"] == "by-hand");
  CHECK(json::parse(e.Cairn({"state", "show", "network.app", e.stack}).out)["attributes"]["name"] ==
        "app-renamed");
  CHECK(e.Cairn({"state", "list", e.stack}).out.find("ssh_key.deploy") == std::string::npos);
  CHECK(client->Get("/api/v1/compute/" + web0).json() == before);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"by-hand", "web-1"});
  auto clean = e.Cairn({"drift", e.stack});
  INFO(clean.out);
  CHECK(clean.exit_code == 0);
  CHECK(clean.out == "No drift. The live resources match the state.\n");
  auto again = e.Cairn({"apply", "--refresh-only", e.stack, "--auto-approve", "--json"});
  CHECK(again.exit_code == 0);
  CHECK(json::parse(again.out)["recorded"] == 0);
  // A refresh-only apply takes nothing it cannot honour.
  CHECK(e.Cairn({"apply", "--refresh-only", "--target", "network.app", e.stack}).exit_code == 1);
}

TEST_CASE(
    "drift --unmanaged: what data sources read is known, and --managed-by needs no variables") {
  StackEnv e;
  auto client = e.server.Client();
  REQUIRE(client
              ->Post("/api/v1/networking",
                     {{"name", "shared-net"}, {"region", "eu-central"}, {"cidr", "10.50.0.0/16"}},
                     "shared")
              .status == 201);
  WriteFile(e.stack + "/main.yaml",
            "kind: data\nname: shared\ntype: network\nfilter: {name: shared-net}\n---\n"
            "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // Another stack whose provider settings need a variable nobody gives here.
  const std::string other = e.dir.path() + "/other";
  WriteFile(other + "/main.yaml",
            "kind: variable\nname: endpoint\ntype: string\n---\n"
            "kind: provider\nendpoint: ${var.endpoint}\n---\n"
            "kind: network\nname: db\nspec: {name: other-db, region: eu-central, cidr: "
            "10.40.0.0/16}\n");
  REQUIRE(e.Cairn({"apply", other, "--auto-approve", "--var", "endpoint=" + e.server.base()})
              .exit_code == 0);

  auto all = e.Cairn({"drift", e.stack, "--unmanaged"});
  INFO(all.out << all.err);
  CHECK(all.exit_code == 2);
  CHECK(all.out.find("shared-net") == std::string::npos);  // read by the stack's data source
  CHECK(all.out.find("other-db") != std::string::npos);
  auto scoped = e.Cairn({"drift", e.stack, "--unmanaged", "--managed-by", other});
  INFO(scoped.out << scoped.err);
  CHECK(scoped.exit_code == 0);
  CHECK(scoped.out.find("other-db") == std::string::npos);

  // A backend setting that needs a variable still does, and says which stack.
  WriteFile(other + "/backend.yaml",
            "kind: variable\nname: state_file\ntype: string\n---\n"
            "kind: backend\ntype: sqlite\npath: ${var.state_file}\n");
  auto missing = e.Cairn({"drift", e.stack, "--unmanaged", "--managed-by", other});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("variable \"state_file\" has no value") != std::string::npos);
  CHECK(missing.err.find("error: --managed-by " + other) != std::string::npos);
}

TEST_CASE("plan and drift of a stack never applied create no state") {
  StackEnv e;
  CHECK(e.Cairn({"plan", e.stack}).exit_code == 0);
  CHECK(e.Cairn({"drift", e.stack}).exit_code == 0);
  CHECK(e.Cairn({"apply", "--refresh-only", e.stack}).exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(e.stack + "/.cairn"));
  // A plan saved then applies to the state its apply creates.
  const std::string planfile = e.dir.path() + "/first.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", planfile}).exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(e.stack + "/.cairn"));
  auto applied = e.Cairn({"apply", planfile});
  INFO(applied.out << applied.err);
  CHECK(applied.exit_code == 0);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});
  // Once something is recorded, a plan made before the state existed is stale.
  auto stale = e.Cairn({"apply", planfile});
  CHECK(stale.exit_code == 1);
  CHECK(stale.err.find("stale") != std::string::npos);
}

}  // namespace drift_command_test
