// Conditions end to end: examples/conditions through the real `cairn`
// against a real `cairn serve`: a validation refusing a value before any
// API call, a precondition known at plan ending the plan, a check that only
// warns, preconditions and postconditions checked during apply, and
// replace_triggered_by; and a precondition false only at apply holding its
// resource and dependents back while the rest is applied.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace conditions_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("examples/conditions: validation, preconditions, a check, replace_triggered_by") {
  StackEnv e;
  fs::remove_all(e.stack);
  fs::copy(std::string(CAIRN_SOURCE_DIR) + "/examples/conditions", e.stack,
           fs::copy_options::recursive);

  // A bad value is refused at load, where it came from, with the rule.
  auto bad = e.Cairn({"plan", "--var", "env=qa", e.stack});
  INFO(bad.err);
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.err,
            "main.yaml:9:7: error: invalid value for variable \"env\": env must be dev "
            "or prod. [invalid_variable_value]"));
  CHECK(Has(bad.err, "the value (from --var env) fails the validation at "));
  CHECK(Has(bad.err, "main.yaml:14:16\n"));

  // A precondition known at plan ends the plan, and nothing is created.
  auto prod = e.Cairn({"plan", "--var", "env=prod", e.stack});
  INFO(prod.err);
  CHECK(prod.exit_code == 1);
  CHECK(Has(prod.err,
            "main.yaml:62:18: error: volume.data: precondition failed: a prod volume "
            "needs at least 100 GiB, not 20 [precondition_failed]"));
  auto prod_apply = e.Cairn({"apply", "--auto-approve", "--var", "env=prod", e.stack});
  CHECK(prod_apply.exit_code == 1);
  CHECK(e.Names("/api/v1/networking").empty());

  // A failing check is a warning: the plan goes on, and says so.
  auto big = e.Cairn({"plan", "--var", "data_gb=80", e.stack});
  INFO(big.err);
  CHECK(big.exit_code == 0);
  CHECK(Has(big.err,
            "warning: check sized_for_env failed: a dev volume over 50 GiB costs more "
            "than it needs to [check_failed]"));
  CHECK(Has(big.out, "Checks: 1 failed (sized_for_env).\n"));
  auto big_json = e.Cairn({"plan", "--json", "--var", "data_gb=80", e.stack});
  REQUIRE(big_json.exit_code == 0);
  json results = json::parse(big_json.out)["check_results"];
  REQUIRE(results.size() == 1);
  CHECK(results[0]["name"] == "sized_for_env");
  CHECK(results[0]["status"] == "failed");
  auto md = e.Cairn({"plan", "--markdown", "--var", "data_gb=80", e.stack});
  CHECK(Has(md.out, "| `sized_for_env` | failed<br>"));

  // Applied: the network's status precondition and the instance's
  // postcondition are checked once their values exist, and hold.
  auto applied = e.Cairn({"apply", "--auto-approve", e.stack});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(Has(applied.out, "Apply complete! Resources: 3 added"));
  CHECK(e.Names("/api/v1/storage") == std::vector<std::string>{"data"});

  // Changing the instance's image replaces it, and the volume with it.
  auto image = e.Cairn({"plan", "--json", "--var", "image=ubuntu-24.04", e.stack});
  REQUIRE(image.exit_code == 0);
  bool volume_replaced = false;
  const json plan = json::parse(image.out);
  for (const auto& c : plan["changes"]) {
    if (c["address"] != "volume.data") continue;
    volume_replaced = c["action"] == "replace" &&
                      c["replace_reason"] == "replace_triggered_by instance.app.image: it changes";
  }
  CHECK(volume_replaced);
}

TEST_CASE("conditions: a precondition false only at apply holds back its resource and dependents") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", R"(kind: network
name: net
spec: {region: eu-central, cidr: 10.41.0.0/16}
---
kind: instance
name: app
spec:
  region: eu-central
  plan: s-1vcpu-1gb
  image: debian-12
  network: ${network.net.id}
lifecycle:
  precondition:
    - condition: ${network.net.status == "deleted"}
      error_message: the network is ${network.net.status}
---
kind: volume
name: data
spec: {region: eu-central, size_gb: 10, instance: '${instance.app.id}'}
---
kind: volume
name: spare
spec: {region: eu-central, size_gb: 10}
)");
  auto r = e.Cairn({"apply", "--auto-approve", e.stack});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err,
            "main.yaml:14:18: error: instance.app: precondition failed: the network is "
            "running [precondition_failed]"));
  CHECK(Has(r.out, "1 failed (1 held back by a precondition), 1 skipped."));
  // The network and the independent volume were made; nothing else sent.
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/api/v1/storage") == std::vector<std::string>{"spare"});
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"net"});
}

}  // namespace conditions_test
