// The expression language end to end: examples/expressions (locals, a
// conditional count, cidrsubnet subnets, for_each instances placed by a
// computed index, one volume per instance) applied by the real `cairn`
// against a real `cairn serve`, and checked through the API itself: what
// was created, and how it is wired.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/support/live_inventory.h"
#include "tests/cli/support/stack_env.h"

namespace expressions_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

// The instance's id as the preview API writes it (firewalls list these):
// its publicId without hyphens, after "inst_".
std::string PreviewInstanceId(std::string public_id) {
  public_id.erase(std::remove(public_id.begin(), public_id.end(), '-'), public_id.end());
  return "inst_" + public_id;
}

// name -> object, for the live objects of a collection; a name twice fails.
std::map<std::string, json> ByName(HttpClient& client, const std::string& collection) {
  std::map<std::string, json> out;
  for (const auto& item : ListAll(client, collection)) {
    const std::string name = item.value("name", "");
    INFO(collection << ": " << name);
    CHECK(out.count(name) == 0);
    out[name] = item;
  }
  return out;
}

std::vector<std::string> Keys(const std::map<std::string, json>& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  return keys;
}

// address -> action of the changes that do something, from `plan --json`.
std::map<std::string, std::string> Actions(const json& plan) {
  std::map<std::string, std::string> out;
  for (const auto& c : plan["changes"]) {
    if (c["action"] != "no-op") out[c["address"]] = c["action"];
  }
  return out;
}

std::vector<std::string> ChangedFields(const json& plan, const std::string& address) {
  std::vector<std::string> fields;
  for (const auto& c : plan["changes"]) {
    if (c["address"] != address) continue;
    for (const auto& f : c["changes"]) fields.push_back(f["field"]);
  }
  std::sort(fields.begin(), fields.end());
  return fields;
}

// What the example, applied with `env`, must have made in the API: the
// networks with their address blocks, each node on the network its index
// says, one volume of its size on each node, a firewall over every node.
// Returns node role -> the instance's publicId.
std::map<std::string, std::string> CheckLiveWiring(HttpClient& client, const std::string& env) {
  const bool prod = env == "prod";
  auto networks = ByName(client, "/api/v1/networking");
  auto instances = ByName(client, "/api/v1/compute");
  auto volumes = ByName(client, "/api/v1/storage");
  auto keys = ListAll(client, "/v1/ssh_keys");
  auto firewalls = ListAll(client, "/v1/firewalls");

  // One network in dev, two in prod, on the subnets cidrsubnet cut.
  std::vector<std::string> want_networks = {"shop-eu-tier-0"};
  if (prod) want_networks.push_back("shop-eu-tier-1");
  REQUIRE(Keys(networks) == want_networks);
  CHECK(networks["shop-eu-tier-0"]["cidr"] == "10.50.0.0/24");
  if (prod) CHECK(networks["shop-eu-tier-1"]["cidr"] == "10.50.1.0/24");
  REQUIRE(keys.size() == 1);
  CHECK(keys[0]["name"] == "shop-eu-deploy");

  // Each node on the network local.placement computes: the roles in order,
  // round robin over the networks (api 0, db 1, worker 0 in prod).
  REQUIRE(Keys(instances) ==
          std::vector<std::string>{"shop-eu-api", "shop-eu-db", "shop-eu-worker"});
  const std::map<std::string, std::string> want_network = {
      {"api", "shop-eu-tier-0"},
      {"db", prod ? "shop-eu-tier-1" : "shop-eu-tier-0"},
      {"worker", "shop-eu-tier-0"}};
  const std::map<std::string, std::string> want_plan = {
      {"api", "s-1vcpu-1gb"}, {"db", "s-2vcpu-4gb"}, {"worker", "s-1vcpu-1gb"}};
  std::map<std::string, std::string> node_ids;
  for (const auto& [role, net] : want_network) {
    const json& i = instances["shop-eu-" + role];
    INFO("instance " << role << ": " << i.dump());
    CHECK(i["networkId"] == networks[net]["publicId"]);
    CHECK(i["planKey"] == want_plan.at(role));
    CHECK(i["imageKey"] == "debian-12");
    CHECK(i["sshKeys"] == json::array({keys[0]["id"]}));
    node_ids[role] = i["publicId"];
  }

  // Exactly one volume per node, of the node's size, attached to that
  // node's own instance.
  REQUIRE(Keys(volumes) ==
          std::vector<std::string>{"shop-eu-api-data", "shop-eu-db-data", "shop-eu-worker-data"});
  const std::map<std::string, int> want_size = {{"api", 20}, {"db", 100}, {"worker", 50}};
  std::map<std::string, int> volumes_on;  // instance publicId -> volumes attached
  for (const auto& [name, v] : volumes) volumes_on[v.value("instanceId", "(none)")]++;
  for (const auto& [role, size] : want_size) {
    const json& v = volumes["shop-eu-" + role + "-data"];
    INFO("volume " << role << ": " << v.dump());
    CHECK(v["sizeGb"] == size);
    CHECK(v["regionKey"] == "eu-central");
    CHECK(v["instanceId"] == node_ids[role]);
    CHECK(volumes_on[node_ids[role]] == 1);
  }

  // The firewall covers every node, and only them, with a rule per port.
  REQUIRE(firewalls.size() == 1);
  CHECK(firewalls[0]["name"] == "shop-eu-edge");
  std::set<std::string> covered, want_covered;
  for (const auto& id : firewalls[0]["instances"]) covered.insert(id.get<std::string>());
  for (const auto& [role, id] : node_ids) want_covered.insert(PreviewInstanceId(id));
  CHECK(covered == want_covered);
  CHECK(firewalls[0]["instances"].size() == 3);
  std::vector<std::string> ports;
  for (const auto& r : firewalls[0]["rules"]) {
    CHECK(r["direction"] == "inbound");
    CHECK(r["protocol"] == "tcp");
    CHECK(r["source"] == "0.0.0.0/0");
    ports.push_back(r["port"]);
  }
  CHECK(ports == std::vector<std::string>{"22", "443"});
  return node_ids;
}

// A `for` over a resource's instances (or over a list read from resources)
// is resolved once the resources exist, as Terraform resolves it. Two
// networks and an instance on each; `tail` adds what reads them only
// through `for` expressions.
std::string ForOverResourcesStack(const std::string& tail) {
  return R"(kind: network
name: tier
count: 2
spec: {region: eu-central, cidr: '${cidrsubnet("10.60.0.0/16", 8, count.index)}'}
---
kind: instance
name: node
for_each: {a: 0, b: 1}
spec:
  region: eu-central
  plan: s-1vcpu-1gb
  image: debian-12
  network: ${network.tier[each.value].id}
---
)" + tail;
}

}  // namespace

TEST_CASE("examples/expressions end to end: conditional count, cidrsubnet, a volume per instance",
          "[expressions]") {
  StackEnv e;
  fs::remove_all(e.stack);
  fs::copy(std::string(CAIRN_SOURCE_DIR) + "/examples/expressions", e.stack,
           fs::copy_options::recursive);
  auto client = e.server.Client();
  const std::vector<std::string> prod = {"--var", "env=prod"};
  const std::vector<std::string> dev = {"--var", "env=dev"};
  auto cairn = [&](std::vector<std::string> args, const std::vector<std::string>& vars) {
    args.push_back(e.stack);
    args.insert(args.end(), vars.begin(), vars.end());
    return e.Cairn(args);
  };

  // The conditional count: one network in dev (the default), two in prod.
  auto valid_dev = cairn({"validate"}, {});
  INFO(valid_dev.out << valid_dev.err);
  CHECK(valid_dev.exit_code == 0);
  CHECK(valid_dev.out ==
        "Valid: 9 resources (1 firewall, 3 instance, 1 network, 1 ssh_key, 3 volume) in 6 "
        "files.\n");
  auto valid_prod = cairn({"validate"}, prod);
  CHECK(valid_prod.out ==
        "Valid: 10 resources (1 firewall, 3 instance, 2 network, 1 ssh_key, 3 volume) in 6 "
        "files.\n");

  // The plan knows what the manifests compute before anything exists.
  auto planned = cairn({"plan", "--json"}, prod);
  INFO(planned.err);
  REQUIRE(planned.exit_code == 0);
  json plan = json::parse(planned.out);
  CHECK(plan["summary"]["add"] == 10);
  CHECK(Actions(plan).size() == 10);
  std::map<std::string, json> after;
  for (const auto& c : plan["changes"]) after[c["address"]] = c["after"];
  CHECK(after["network.tier[1]"]["cidr"] == "10.50.1.0/24");
  CHECK(after["instance.node[\"db\"]"]["plan"] == "s-2vcpu-4gb");
  CHECK(after["volume.data[\"worker\"]"]["size_gb"] == 50);
  std::map<std::string, json> planned_outputs;
  for (const auto& o : plan["output_changes"]) planned_outputs[o["name"]] = o["after"];
  CHECK(planned_outputs["summary"] == "PROD: 3 nodes on 2 networks (10.50.0.0/24, 10.50.1.0/24)");
  CHECK(planned_outputs["total_disk_gb"] == 170);
  CHECK(planned_outputs["node_ips"] == json({{"$cairn_unknown", true}}));
  CHECK(e.Names("/api/v1/compute").empty());

  auto applied = cairn({"apply", "--auto-approve"}, prod);
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(applied.out.find("Apply complete! Resources: 10 added, 0 changed, 0 replaced, 0 "
                         "destroyed.") != std::string::npos);
  auto node_ids = CheckLiveWiring(*client, "prod");
  // The state records what the API holds.
  CHECK(e.StateId("instance.node[\"db\"]") == node_ids["db"]);

  // The outputs, computed from what apply made.
  auto out = e.Cairn({"output", e.stack, "--json"});
  INFO(out.out << out.err);
  REQUIRE(out.exit_code == 0);
  json outputs = json::parse(out.out);
  auto live_instances = ByName(*client, "/api/v1/compute");
  auto live_networks = ByName(*client, "/api/v1/networking");
  const std::string tier0 = live_networks["shop-eu-tier-0"]["publicId"];
  const std::string tier1 = live_networks["shop-eu-tier-1"]["publicId"];
  CHECK(outputs["summary"]["value"] == "PROD: 3 nodes on 2 networks (10.50.0.0/24, 10.50.1.0/24)");
  CHECK(outputs["network_cidrs"]["value"] == json::array({"10.50.0.0/24", "10.50.1.0/24"}));
  CHECK(outputs["node_networks"]["value"] ==
        json({{"api", tier0}, {"db", tier1}, {"worker", tier0}}));
  json ips = json::object();
  for (const char* role : {"api", "db", "worker"}) {
    const json& i = live_instances[std::string("shop-eu-") + role];
    REQUIRE(i["ipv4"].is_string());
    ips[role] = i["ipv4"];
  }
  CHECK(outputs["node_ips"]["value"] == ips);
  CHECK(outputs["instance_names"]["value"] == "shop-eu-api,shop-eu-db,shop-eu-worker");
  CHECK(outputs["big_disks"]["value"] == json::array({"DB", "WORKER"}));
  CHECK(outputs["volume_sizes"]["value"] == json({{"api", 20}, {"db", 100}, {"worker", 50}}));
  CHECK(outputs["total_disk_gb"]["value"] == 170);
  auto summary = e.Cairn({"output", "summary", e.stack});
  CHECK(summary.out == "PROD: 3 nodes on 2 networks (10.50.0.0/24, 10.50.1.0/24)\n");

  // Nothing left to do.
  auto again = cairn({"plan", "--detailed-exitcode"}, prod);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // Back to dev: the second network goes, and with it what stands on it:
  // the db node moves to the first network (a replacement: an instance's
  // network is immutable), its volume and the firewall follow the new
  // instance's id. Nothing else changes.
  auto to_dev = cairn({"plan", "--json"}, dev);
  INFO(to_dev.err);
  REQUIRE(to_dev.exit_code == 0);
  json dev_plan = json::parse(to_dev.out);
  CHECK(Actions(dev_plan) ==
        std::map<std::string, std::string>{{"network.tier[1]", "delete"},
                                           {"instance.node[\"db\"]", "replace"},
                                           {"volume.data[\"db\"]", "update"},
                                           {"firewall.edge", "update"}});
  CHECK(ChangedFields(dev_plan, "instance.node[\"db\"]") == std::vector<std::string>{"network"});
  CHECK(ChangedFields(dev_plan, "volume.data[\"db\"]") == std::vector<std::string>{"instance"});
  CHECK(ChangedFields(dev_plan, "firewall.edge") == std::vector<std::string>{"instances"});
  std::set<std::string> outputs_changed;
  for (const auto& o : dev_plan["output_changes"]) outputs_changed.insert(o["name"]);
  CHECK(outputs_changed ==
        std::set<std::string>{"network_cidrs", "node_ips", "node_networks", "summary"});

  auto applied_dev = cairn({"apply", "--auto-approve"}, dev);
  INFO(applied_dev.out << applied_dev.err);
  REQUIRE(applied_dev.exit_code == 0);
  CHECK(applied_dev.out.find("Apply complete! Resources: 0 added, 2 changed, 1 replaced, 1 "
                             "destroyed.") != std::string::npos);
  auto dev_ids = CheckLiveWiring(*client, "dev");
  CHECK(dev_ids["api"] == node_ids["api"]);  // untouched
  CHECK(dev_ids["db"] != node_ids["db"]);    // replaced
  auto dev_outputs = json::parse(e.Cairn({"output", e.stack, "--json"}).out);
  CHECK(dev_outputs["summary"]["value"] == "DEV: 3 nodes on 1 network (10.50.0.0/24)");
  CHECK(cairn({"plan", "--detailed-exitcode"}, dev).exit_code == 0);

  // Destroy leaves nothing: not in the API, not in the state.
  auto destroyed = cairn({"destroy", "--auto-approve"}, dev);
  INFO(destroyed.out << destroyed.err);
  CHECK(destroyed.exit_code == 0);
  CHECK(Describe(LiveInventory(*client)) == Describe(EmptyInventory()));
  auto listed = e.Cairn({"state", "list", e.stack});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.empty());
}

// The loader unrolls the `for` (the instances are known, their ids are not)
// but leaves the loop variable in each element: the plan's residual is
// "${[n.id, n.id]}", whose `n` nothing binds at apply.
TEST_CASE("expressions: a for over a resource's instances in a spec is resolved at apply",
          "[expressions]") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", ForOverResourcesStack(R"(kind: firewall
name: edge
spec:
  rules: [{direction: inbound, protocol: tcp, port: "22", source: 0.0.0.0/0, action: allow}]
  instances: '${[for k, n in instance.node : n.id]}'
)"));
  auto client = e.server.Client();
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  // firewall.edge fails: "create failed: a value it needs is still unknown
  // after its dependencies were applied".
  CHECK(applied.exit_code == 0);
  auto firewalls = ListAll(*client, "/v1/firewalls");
  REQUIRE(firewalls.size() == 1);
  std::set<std::string> covered, nodes;
  for (const auto& id : firewalls[0]["instances"]) covered.insert(id.get<std::string>());
  for (const auto& i : ListAll(*client, "/api/v1/compute")) {
    nodes.insert(PreviewInstanceId(i["publicId"]));
  }
  CHECK(nodes.size() == 2);
  CHECK(covered == nodes);
  auto again = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
}

// The same in outputs, where the apply succeeds and records each as null.
// The plan does not know them either, though every value they read but
// the addresses is in the manifests.
TEST_CASE("expressions: a for over resources in an output has its value after apply",
          "[expressions]") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", ForOverResourcesStack(R"(kind: output
name: ips
value: '${{for k, n in instance.node : k => n.ipv4}}'
---
kind: output
name: plans
value: '${{for k, n in instance.node : k => n.plan}}'
---
kind: output
name: gateways
value: '${[for c in network.tier[*].cidr : cidrhost(c, 1)]}'
)"));
  auto client = e.server.Client();
  auto planned = e.Cairn({"plan", e.stack, "--json"});
  INFO(planned.err);
  REQUIRE(planned.exit_code == 0);
  std::map<std::string, json> planned_outputs;
  const json plan = json::parse(planned.out);
  for (const auto& o : plan["output_changes"]) {
    planned_outputs[o["name"]] = o["after"];
  }
  CHECK(planned_outputs["plans"] == json({{"a", "s-1vcpu-1gb"}, {"b", "s-1vcpu-1gb"}}));
  CHECK(planned_outputs["gateways"] == json::array({"10.60.0.1", "10.60.1.1"}));

  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  auto out = e.Cairn({"output", e.stack, "--json"});
  REQUIRE(out.exit_code == 0);
  json outputs = json::parse(out.out);
  json ips = json::object();
  for (const auto& i : ListAll(*client, "/api/v1/compute")) {
    ips[i["name"].get<std::string>().substr(5)] = i["ipv4"];  // node-a -> a
  }
  CHECK(ips.size() == 2);
  CHECK(outputs["ips"]["value"] == ips);
  CHECK(outputs["plans"]["value"] == json({{"a", "s-1vcpu-1gb"}, {"b", "s-1vcpu-1gb"}}));
  CHECK(outputs["gateways"]["value"] == json::array({"10.60.0.1", "10.60.1.1"}));
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
}

}  // namespace expressions_test
