// The rough edges a user meets in the first hour, as they meet them: the
// real `cairn` binary against a real `cairn serve`. Summaries that count
// what happened, one error per cause, ids in the state's form, output and
// state commands that take what users type, JSON on stdout from a plan
// that fails, one rendering of values.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace first_impressions_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A loopback address nobody listens on: bound, never listening.
struct DeadEndpoint {
  int fd = -1;
  std::string url;
  DeadEndpoint() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  ~DeadEndpoint() { ::close(fd); }
};

}  // namespace

TEST_CASE("cairn output NAME: a directory of that name is the stack, else the output") {
  StackEnv e;
  const std::string sens = e.dir.path() + "/sens";
  WriteFile(sens + "/main.yaml", "kind: output\nname: greeting\nvalue: hello\n");
  REQUIRE(e.Cairn({"apply", sens, "--auto-approve"}).exit_code == 0);
  auto stack = RunCairn({"output", "sens"}, e.env, "", e.dir.path());
  INFO(stack.out << stack.err);
  CHECK(stack.exit_code == 0);
  CHECK(stack.out == "greeting = \"hello\"\n");
  // In the stack itself, the same word is an output's name.
  WriteFile(sens + "/main.yaml",
            "kind: output\nname: greeting\nvalue: hello\n---\nkind: output\nname: sens\n"
            "value: [a, b]\n");
  REQUIRE(e.Cairn({"apply", sens, "--auto-approve"}).exit_code == 0);
  auto named = RunCairn({"output", "sens"}, e.env, "", sens);
  CHECK(named.exit_code == 0);
  CHECK(named.out == "[\"a\", \"b\"]\n");  // as plan and apply show a list
  CHECK(RunCairn({"output", "--help"}, e.env).out.find("a NAME that is a directory is the stack") !=
        std::string::npos);
}

TEST_CASE("summaries count what happened: moves, recovered operations, and a destroy's own") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // A move and nothing else.
  std::string text = BasicStack();
  const std::string key_doc = "kind: ssh_key\nname: deploy\nspec: {";
  text.replace(text.find(key_doc), key_doc.size(),
               "kind: ssh_key\nname: admin\nspec: {name: deploy, ");
  const std::string key_ref = "${ssh_key.deploy.id}";
  text.replace(text.find(key_ref), key_ref.size(), "${ssh_key.admin.id}");
  text += "---\nkind: moved\nfrom: ssh_key.deploy\nto: ssh_key.admin\n";
  WriteFile(e.stack + "/main.yaml", text);
  auto moved = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(moved.out << moved.err);
  REQUIRE(moved.exit_code == 0);
  CHECK(moved.out.find("Apply complete! Resources: 0 added, 0 changed, 0 replaced, 0 destroyed, "
                       "1 moved.") != std::string::npos);
  // Apply prints values as plan does.
  CHECK(moved.out.find("ips = [\"") != std::string::npos);
  CHECK(moved.out.find("\", \"") != std::string::npos);

  // A destroy killed once its second delete was sent: the next one finishes
  // the job and counts the recovered deletes with the others.
  auto env = e.env;
  env["CAIRN_CRASH_AT"] = "apply.sent:2";
  auto killed = RunCairn({"destroy", e.stack, "--auto-approve", "--parallelism", "1"}, env);
  REQUIRE(killed.signal == SIGKILL);
  auto rest = e.Cairn({"destroy", e.stack, "--auto-approve"});
  INFO(rest.out << rest.err);
  REQUIRE(rest.exit_code == 0);
  // The four, or three when the first delete was done and recorded before
  // the kill (a delete waiting to be gone holds no slot, so the second can
  // be sent first or after): either way the recovered ones are counted.
  CHECK((rest.out.find("Destroy complete! Resources: 4 destroyed (") != std::string::npos ||
         rest.out.find("Destroy complete! Resources: 3 destroyed (") != std::string::npos));
  CHECK(rest.out.find(" of them recovered from an interrupted run).") != std::string::npos);
  CHECK(rest.out.find("added") == std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());
}

TEST_CASE("an unreachable endpoint or a refused token is one error, said once") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", BasicStack(3));
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  {
    DeadEndpoint dead;
    e.env["CAIRN_ENDPOINT"] = dead.url;
    auto plan = e.Cairn({"plan", e.stack});
    INFO(plan.err);
    CHECK(plan.exit_code == 1);
    CHECK(Count(plan.err, "[unreachable]") == 1);
    CHECK(plan.err.find("1 error, 0 warnings") != std::string::npos);
    CHECK(plan.err.find("retrying") == std::string::npos);
    WriteFile(e.stack + "/main.yaml", BasicStack(6));
    auto apply = e.Cairn({"apply", e.stack, "--auto-approve", "--refresh=false"});
    INFO(apply.out << apply.err);
    CHECK(apply.exit_code == 1);
    CHECK(Count(apply.err, "[unreachable]") == 1);
    CHECK(Count(apply.err, "[create_failed]") == 0);
    CHECK(apply.err.find("1 error, 0 warnings") != std::string::npos);
    CHECK(apply.out.find("skipped") != std::string::npos);
  }
  e.env["CAIRN_ENDPOINT"] = e.server.base();
  e.env["CAIRN_TOKEN"] = "cairn_wrongwrongwrongwrongwrongwrongwrongwrong123";
  auto plan = e.Cairn({"plan", e.stack});
  INFO(plan.err);
  CHECK(plan.exit_code == 1);
  CHECK(Count(plan.err, "[unauthorized]") == 1);
  CHECK(plan.err.find("1 error, 0 warnings") != std::string::npos);
  CHECK(plan.err.find("the API refused the token") != std::string::npos);
}

TEST_CASE("a failed create is one error, the API's reason in its detail") {
  StackEnv e({"--faults", "provision_failed=1,seed=7"});
  auto apply = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 1);
  CHECK(Count(apply.err, "[create_failed]") == 1);
  CHECK(Count(apply.err, "[provisioning_failed]") == 0);
  CHECK(apply.err.find("provisioning_failed") != std::string::npos);  // the API's code, in detail
  CHECK(apply.err.find("1 error, 0 warnings") != std::string::npos);
}

TEST_CASE("an API error message names an instance by the id the state holds") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml",
            "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // An instance made by hand on the stack's network keeps it from being deleted.
  auto client = e.server.Client();
  auto made = client->Post("/api/v1/compute",
                           {{"name", "by-hand"},
                            {"region", "eu-central"},
                            {"plan", "s-1vcpu-1gb"},
                            {"image", "debian-12"},
                            {"networkId", e.StateId("network.app")}},
                           "by-hand");
  REQUIRE(made.status == 201);
  const std::string instance = made.json()["instance"]["publicId"];
  auto destroy = e.Cairn({"destroy", e.stack, "--auto-approve"});
  INFO(destroy.out << destroy.err);
  CHECK(destroy.exit_code == 1);
  CHECK(destroy.err.find(instance) != std::string::npos);
  CHECK(destroy.err.find("inst_") == std::string::npos);
  CHECK(Count(destroy.err, "[delete_failed]") == 1);
}

TEST_CASE("state show and rm take several addresses, and a resource's instances") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml",
            "kind: network\nname: node\nfor_each: [a, b]\n"
            "spec: {name: \"node-${each.key}\", region: eu-central, cidr: 10.30.0.0/16}\n---\n"
            "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.31.0.0/16}\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  auto nodes = e.Cairn({"state", "show", "network.node", e.stack});
  INFO(nodes.out << nodes.err);
  REQUIRE(nodes.exit_code == 0);
  json shown = json::parse(nodes.out);
  REQUIRE(shown.is_array());
  REQUIRE(shown.size() == 2);
  CHECK(shown[0]["address"] == "network.node[\"a\"]");
  CHECK(shown[1]["address"] == "network.node[\"b\"]");
  auto one = json::parse(e.Cairn({"state", "show", "network.core", e.stack}).out);
  CHECK(one["address"] == "network.core");  // one resource: an object, as before
  auto two = e.Cairn({"state", "show", "network.core", "network.node[\"b\"]", e.stack});
  REQUIRE(two.exit_code == 0);
  CHECK(json::parse(two.out).size() == 2);
  // From inside the stack, no directory: every argument is an address.
  auto here = RunCairn({"state", "show", "network.core", "network.node"}, e.env, "", e.stack);
  REQUIRE(here.exit_code == 0);
  CHECK(json::parse(here.out).size() == 3);

  // rm: all or nothing.
  auto typo = e.Cairn({"state", "rm", "network.core", "network.nope", e.stack});
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find("network.nope is not in the state") != std::string::npos);
  CHECK(e.Cairn({"state", "list", e.stack}).out.find("network.core") != std::string::npos);
  auto rm = e.Cairn({"state", "rm", "network.core", "network.node", e.stack});
  INFO(rm.out << rm.err);
  REQUIRE(rm.exit_code == 0);
  CHECK(rm.out.find("Removed network.node[\"a\"] from the state.") != std::string::npos);
  CHECK(e.Cairn({"state", "list", e.stack}).out.empty());
  CHECK(e.Names("/api/v1/networking").size() == 3);  // forgotten, not deleted
}

TEST_CASE("plan --json with errors prints the diagnostics as JSON on stdout") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", "kind: network\nname: app\nspec: {region: nowhere}\n");
  auto bad = e.Cairn({"plan", e.stack, "--json"});
  CHECK(bad.exit_code == 1);
  json j = json::parse(bad.out);
  CHECK(j["ok"] == false);
  REQUIRE(j["diagnostics"].size() >= 1);
  CHECK(j["diagnostics"][0]["file"].get<std::string>().find("main.yaml") != std::string::npos);
  CHECK(j["diagnostics"][0].contains("code"));
  // A plan-time refusal too.
  WriteFile(e.stack + "/main.yaml",
            "kind: data\nname: shared\ntype: network\nfilter: {name: nowhere}\n");
  auto missing = e.Cairn({"plan", e.stack, "--json"});
  CHECK(missing.exit_code == 1);
  json m = json::parse(missing.out);
  CHECK(m["diagnostics"][0]["code"] == "data_not_found");
  CHECK(m["diagnostics"][0]["line"] == 2);  // at the data source's name
}

}  // namespace first_impressions_test
