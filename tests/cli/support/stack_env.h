// Test-only support for the CLI tests: a real `cairn serve` on loopback, a
// stack directory beside it (a key, a network and `count` instances on it,
// an output of their addresses), and the `cairn` binary run against them.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace cairn::testing {

inline constexpr const char* kStackKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g t@cairn";

// `network_extra`: lines added to the network's document (a lifecycle).
inline std::string BasicStack(int instances = 2, const std::string& plan = "s-1vcpu-1gb",
                              const std::string& instance_extra = "") {
  return std::string("kind: ssh_key\nname: deploy\nspec: {public_key: \"") + kStackKey +
         "\"}\n---\n"
         "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: " +
         std::to_string(instances) + "\n" + instance_extra +
         "spec:\n  name: web-${count.index}\n  region: eu-central\n  plan: " + plan +
         "\n  image: debian-12\n  network: ${network.app.id}\n  ssh_keys: "
         "[\"${ssh_key.deploy.id}\"]\n"
         "---\nkind: output\nname: ips\nvalue: ${instance.web[*].ipv4}\n";
}

struct StackEnv {
  ServeFixture server;
  TempDir dir;
  std::string stack;
  std::map<std::string, std::string> env;

  explicit StackEnv(std::vector<std::string> serve_args = {}) : server(std::move(serve_args)) {
    stack = dir.path() + "/stack";
    WriteFile(stack + "/main.yaml", BasicStack());
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  }
  CommandResult Cairn(std::vector<std::string> args, const std::string& stdin_text = "") {
    return RunCairn(args, env, stdin_text);
  }
  std::string StateId(const std::string& address) {
    auto r = Cairn({"state", "show", address, stack});
    INFO(address << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["id"];
  }
  // Names of live resources behind a list route, all pages.
  std::vector<std::string> Names(const std::string& route) {
    auto client = server.Client();
    std::vector<std::string> names;
    std::string cursor;
    for (;;) {
      auto r = client->Get(route + "?limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
      REQUIRE(r.status == 200);
      nlohmann::json j = r.json();
      for (const auto& item : j["data"]) names.push_back(item["name"]);
      const nlohmann::json& p = j["pagination"];
      std::string next;
      for (const char* field : {"next_cursor", "next"}) {
        if (p.contains(field) && p[field].is_string()) next = p[field];
      }
      if (next.empty() || (p.contains("has_more") && !p["has_more"].get<bool>())) break;
      cursor = next;
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace cairn::testing
