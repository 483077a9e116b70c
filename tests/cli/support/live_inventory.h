// Test-only support for the crash and fault tests: the stack they apply, and
// what the API holds, read through the list endpoints (every page) of both
// APIs, so that a duplicate or an orphan cannot hide.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/serve_fixture.h"

namespace cairn::testing {

// A key, a network, five instances in it with the key, a firewall over all of
// them and a volume on the first: nine creates, with dependencies two deep;
// an output lists the instances' addresses.
// `provider` is an optional provider document (without the separator).
// `changed` is the same stack with a new image (which replaces every
// instance, so the firewall and the volume follow: updates) and one more
// firewall rule.
inline std::string CrashStackYaml(const std::string& provider = "", bool changed = false) {
  std::string yaml = provider.empty() ? "" : provider + "\n---\n";
  yaml += R"(kind: ssh_key
name: deploy
spec:
  public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g quickstart@cairn
---
kind: network
name: core
spec:
  region: eu-central
  cidr: 10.40.0.0/16
---
kind: instance
name: web
count: 5
spec:
  name: crash-web-${count.index}
  region: eu-central
  plan: s-1vcpu-1gb
  image: IMAGE
  network: ${network.core.id}
  ssh_keys: ["${ssh_key.deploy.id}"]
---
kind: firewall
name: edge
spec:
  rules:
    - {direction: inbound, protocol: tcp, port: "22", source: 0.0.0.0/0, action: allow}
RULE  instances: ${instance.web[*].id}
---
kind: volume
name: data
spec:
  region: eu-central
  size_gb: 10
  instance: ${instance.web[0].id}
---
kind: output
name: web_ips
value: ${instance.web[*].ipv4}
)";
  yaml.replace(yaml.find("IMAGE"), 5, changed ? "ubuntu-24.04" : "debian-12");
  yaml.replace(yaml.find("RULE"), 4,
               changed ? "    - {direction: inbound, protocol: tcp, port: \"443\", source: "
                         "0.0.0.0/0, action: allow}\n"
                       : "");
  return yaml;
}

// Every collection whose records are distinct (the preview views of instances
// and networks show the same records as /api/v1/compute and /networking).
inline const std::vector<std::string>& InventoryCollections() {
  static const std::vector<std::string> kCollections = {
      "/api/v1/compute", "/api/v1/networking", "/api/v1/storage", "/v1/ssh_keys", "/v1/firewalls"};
  return kCollections;
}

// Every live object of `collection`, following the pagination of either API
// two at a time (so that a stack of nine spans several pages).
inline std::vector<nlohmann::json> ListAll(HttpClient& client, const std::string& collection) {
  std::vector<nlohmann::json> all;
  const std::string first = collection + "?limit=2";
  std::string path = first;
  for (int page = 0; page < 1000; ++page) {
    // Under --faults the test's own reads meet faults too: retry them.
    HttpResult r = client.Get(path);
    for (int retry = 0; retry < 200 && (r.status == 0 || r.status == 429 || r.status >= 500);
         ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      r = client.Get(path);
    }
    INFO("GET " << path << " -> " << r.status << " " << r.error << " " << r.body);
    REQUIRE(r.status == 200);
    nlohmann::json body = r.json();
    REQUIRE(body.contains("data"));
    for (auto& item : body["data"]) all.push_back(item);
    const nlohmann::json& p = body["pagination"];
    REQUIRE(p.is_object());
    nlohmann::json next =
        p.contains("next_cursor") ? p["next_cursor"] : p.value("next", nlohmann::json());
    if (!next.is_string() || next.get<std::string>().empty()) return all;
    const std::string cursor = next.get<std::string>();
    char* escaped = curl_easy_escape(nullptr, cursor.c_str(), static_cast<int>(cursor.size()));
    path = first + "&cursor=" + escaped;
    curl_free(escaped);
  }
  FAIL("the list of " << collection << " never ends");
  return all;
}

// collection -> the sorted names of its live objects (a name twice is a
// duplicate).
using Inventory = std::map<std::string, std::vector<std::string>>;

inline Inventory LiveInventory(HttpClient& client) {
  Inventory inv;
  for (const auto& c : InventoryCollections()) {
    auto& names = inv[c];
    for (const auto& item : ListAll(client, c)) names.push_back(item.value("name", "?"));
    std::sort(names.begin(), names.end());
  }
  return inv;
}

inline Inventory CrashStackInventory() {
  return {{"/api/v1/compute",
           {"crash-web-0", "crash-web-1", "crash-web-2", "crash-web-3", "crash-web-4"}},
          {"/api/v1/networking", {"core"}},
          {"/api/v1/storage", {"data"}},
          {"/v1/ssh_keys", {"deploy"}},
          {"/v1/firewalls", {"edge"}}};
}

inline Inventory EmptyInventory() {
  Inventory inv;
  for (const auto& c : InventoryCollections()) inv[c];
  return inv;
}

inline std::string Describe(const Inventory& inv) {
  std::string out;
  for (const auto& [c, names] : inv) {
    out += c + ":";
    for (const auto& n : names) out += " " + n;
    out += "\n";
  }
  return out;
}

// The wiring survived recovery too: the firewall covers exactly the live
// instances, each in the live network with the live key, and the volume is
// on crash-web-0 (a reference to a duplicate or to a lost object shows here).
inline void CheckCrashStackWiring(HttpClient& client) {
  auto instances = ListAll(client, "/api/v1/compute");
  auto networks = ListAll(client, "/api/v1/networking");
  auto keys = ListAll(client, "/v1/ssh_keys");
  auto firewalls = ListAll(client, "/v1/firewalls");
  auto volumes = ListAll(client, "/api/v1/storage");
  REQUIRE(networks.size() == 1);
  REQUIRE(keys.size() == 1);
  REQUIRE(firewalls.size() == 1);
  REQUIRE(volumes.size() == 1);
  std::vector<std::string> preview_ids;
  std::string web0;
  for (const auto& i : instances) {
    std::string id = i.value("publicId", "");
    std::string hex = id;
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    preview_ids.push_back("inst_" + hex);
    if (i.value("name", "") == "crash-web-0") web0 = id;
    CHECK(i.value("networkId", "") == networks[0].value("publicId", "-"));
    CHECK(i.value("sshKeys", nlohmann::json::array()) == nlohmann::json::array({keys[0]["id"]}));
  }
  std::vector<std::string> covered = firewalls[0].value("instances", std::vector<std::string>{});
  std::sort(preview_ids.begin(), preview_ids.end());
  std::sort(covered.begin(), covered.end());
  CHECK(covered == preview_ids);
  CHECK(volumes[0].value("instanceId", "") == web0);
}

// After the change of CrashStackYaml(_, true): every instance on the new
// image, the firewall with both rules.
inline void CheckCrashStackChanged(HttpClient& client) {
  for (const auto& i : ListAll(client, "/api/v1/compute")) {
    CHECK(i.value("imageKey", "") == "ubuntu-24.04");
  }
  auto firewalls = ListAll(client, "/v1/firewalls");
  REQUIRE(firewalls.size() == 1);
  CHECK(firewalls[0]["rules"].size() == 2);
}

}  // namespace cairn::testing
