// Integration tests: routes, envelopes, customerStatus, auth, isolation,
// validation. Each test starts the real `cairn serve` (serve_fixture.h).
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>

#include "tests/server/serve_fixture.h"

namespace serve_api_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7 test@cairn";

const json kCreatedCustomerStatus = json::parse(R"({
    "status": "pending", "reasonCode": "provisioning_pending", "severity": "info",
    "actionability": "wait", "guidance": "wait",
    "operation": {"type": "create", "state": "queued"},
    "actions": {"edit": true, "delete": true, "start": false, "stop": false, "reboot": false,
                "snapshot": false, "firewall": false, "reverseDns": false}})");

bool IsUuid(const std::string& s) {
  return std::regex_match(
      s, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
}

std::string Hex(const std::string& uuid) {
  std::string h;
  for (char c : uuid) {
    if (c != '-') h += c;
  }
  return h;
}

}  // namespace

TEST_CASE("control-plane compute: create, detail and list carry the customerStatus of spec 2.3") {
  ServeFixture srv({"--provision-delay", "1h"});  // stays queued
  auto c = srv.Client();
  auto r = c->Post("/api/v1/compute", InstanceBody("web-1"), "create-1");
  REQUIRE(r.status == 201);
  CHECK(r.header("content-type") == "application/json");
  CHECK_FALSE(r.header("x-request-id").empty());
  json inst = r.json()["instance"];
  CHECK(IsUuid(inst["publicId"]));
  CHECK(inst["name"] == "web-1");
  CHECK(inst["regionKey"] == "eu-central");
  CHECK(inst["imageKey"] == "debian-12");
  CHECK(inst["planKey"] == "s-1vcpu-1gb");
  CHECK(inst["status"] == "queued");
  CHECK(inst["customerStatus"] == kCreatedCustomerStatus);
  CHECK(std::regex_match(inst["createdAt"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  std::string id = inst["publicId"];
  CHECK(r.header("location") == "/api/v1/compute/" + id);

  auto d = c->Get("/api/v1/compute/" + id);
  REQUIRE(d.status == 200);
  CHECK(d.json()["instance"]["customerStatus"] == kCreatedCustomerStatus);
  auto l = c->Get("/api/v1/compute");
  REQUIRE(l.status == 200);
  REQUIRE(l.json()["data"].size() == 1);
  CHECK(l.json()["data"][0]["customerStatus"] == kCreatedCustomerStatus);
  CHECK(l.json()["data"][0]["publicId"] == id);
  CHECK(l.json()["pagination"] == json({{"limit", 50}, {"next", nullptr}}));

  // The same record through the preview view.
  auto p = c->Get("/v1/instances/inst_" + Hex(id));
  REQUIRE(p.status == 200);
  CHECK(p.json()["id"] == "inst_" + Hex(id));
  CHECK(p.json()["status"] == "provisioning");
  CHECK_FALSE(p.json().contains("ipv4"));
  // Either id form works on either API.
  CHECK(c->Get("/v1/instances/" + id).status == 200);
  CHECK(c->Get("/api/v1/compute/inst_" + Hex(id)).status == 200);
}

TEST_CASE("preview instances: create returns provisioning, then running with an ipv4") {
  ServeFixture srv;
  auto c = srv.Client();
  auto r = c->Post("/v1/instances", InstanceBody("api-1", "us-east"));
  REQUIRE(r.status == 201);
  json inst = r.json();
  CHECK(std::regex_match(inst["id"].get<std::string>(), std::regex("inst_[0-9a-f]{32}")));
  CHECK(inst["status"] == "provisioning");
  CHECK(inst["region"] == "us-east");
  CHECK(inst["plan"] == "s-1vcpu-1gb");
  CHECK(inst["image"] == "debian-12");
  CHECK(inst["ssh_keys"] == json::array());
  CHECK(inst.contains("created_at"));
  std::string id = inst["id"];
  auto g = PollUntil([&] { return c->Get("/v1/instances/" + id); },
                     [](const HttpResult& h) { return h.json().value("status", "") == "running"; });
  REQUIRE(g.json()["status"] == "running");
  CHECK(std::regex_match(g.json()["ipv4"].get<std::string>(), std::regex(R"(100\.80\.\d+\.\d+)")));
  auto cp = c->Get("/api/v1/compute/" + id);
  json cs = cp.json()["instance"]["customerStatus"];
  CHECK(cs["status"] == "running");
  CHECK(cs["actions"]["stop"] == true);
  CHECK(cs["actions"]["start"] == false);
}

TEST_CASE("every preview collection: create, list, get, patch, delete") {
  ServeFixture srv;
  auto c = srv.Client();
  auto key = c->Post("/v1/ssh_keys", {{"name", "laptop"}, {"public_key", kEd25519}});
  REQUIRE(key.status == 201);
  CHECK(key.json()["fingerprint"] == "SHA256:pKUCZphKjiNEFFC/VLj86rjqxrYtBDUUODgbovL4k+8");
  std::string key_id = key.json()["id"];
  CHECK(key_id.rfind("key_", 0) == 0);

  auto net = c->Post("/v1/networks",
                     {{"name", "backend"}, {"region", "eu-central"}, {"cidr", "10.10.0.0/16"}});
  REQUIRE(net.status == 201);
  std::string net_id = net.json()["id"];
  CHECK(net_id.rfind("net_", 0) == 0);
  CHECK(net.json()["cidr"] == "10.10.0.0/16");
  CHECK(net.json()["status"] == "provisioning");

  json body = InstanceBody("db-1");
  body["ssh_keys"] = {key_id};
  body["network"] = net_id;
  auto inst = c->Post("/v1/instances", body);
  INFO(inst.body);
  REQUIRE(inst.status == 201);
  CHECK(inst.json()["ssh_keys"] == json({key_id}));
  CHECK(inst.json()["network"] == net_id);
  std::string inst_id = inst.json()["id"];

  auto fw = c->Post("/v1/firewalls", {{"name", "web"},
                                      {"rules",
                                       {{{"direction", "inbound"},
                                         {"protocol", "tcp"},
                                         {"port", "443"},
                                         {"source", "0.0.0.0/0"},
                                         {"action", "allow"}}}},
                                      {"instances", {inst_id}}});
  REQUIRE(fw.status == 201);
  std::string fw_id = fw.json()["id"];
  CHECK(fw_id.rfind("fw_", 0) == 0);
  CHECK(fw.json()["instances"] == json({inst_id}));

  for (std::string coll : {"instances", "networks", "firewalls", "ssh_keys"}) {
    auto l = c->Get("/v1/" + coll);
    INFO(coll);
    REQUIRE(l.status == 200);
    CHECK(l.json()["data"].size() == 1);
    CHECK(l.json()["pagination"] == json({{"next_cursor", nullptr}, {"has_more", false}}));
  }
  CHECK(c->Get("/v1/firewalls/" + fw_id).json()["rules"][0]["port"] == "443");

  auto p = c->Patch("/v1/ssh_keys/" + key_id, {{"name", "renamed"}});
  REQUIRE(p.status == 200);
  CHECK(p.json()["name"] == "renamed");
  auto pf = c->Patch("/v1/firewalls/" + fw_id, {{"rules", json::array()}});
  REQUIRE(pf.status == 200);
  CHECK(pf.json()["rules"] == json::array());
  // Wait for the instance to run, then rename it and change its plan.
  PollUntil([&] { return c->Get("/v1/instances/" + inst_id); },
            [](const HttpResult& h) { return h.json().value("status", "") == "running"; });
  auto pi = c->Patch("/v1/instances/" + inst_id, {{"name", "db-2"}, {"plan", "s-2vcpu-4gb"}});
  REQUIRE(pi.status == 200);
  CHECK(pi.json()["name"] == "db-2");
  CHECK(pi.json()["plan"] == "s-2vcpu-4gb");

  // A network in use cannot go.
  auto busy = c->Delete("/v1/networks/" + net_id);
  CHECK(busy.status == 409);
  CHECK(busy.json()["error"]["code"] == "resource_in_use");

  // Firewalls and keys go at once (204); instances pass through deleting (202).
  CHECK(c->Delete("/v1/ssh_keys/" + key_id).status == 204);
  CHECK(c->Get("/v1/ssh_keys/" + key_id).status == 404);
  auto di = c->Delete("/v1/instances/" + inst_id);
  REQUIRE(di.status == 202);
  CHECK(di.json()["status"] == "deleting");
  auto gone = PollUntil([&] { return c->Get("/v1/instances/" + inst_id); },
                        [](const HttpResult& h) { return h.status == 404; });
  CHECK(gone.status == 404);
  CHECK(gone.json()["error"]["code"] == "resource_not_found");
  CHECK(c->Get("/v1/instances").json()["data"].empty());
  // The firewall forgot the deleted instance; now the network can go.
  CHECK(c->Get("/v1/firewalls/" + fw_id).json()["instances"] == json::array());
  CHECK(c->Delete("/v1/networks/" + net_id).status == 202);
  CHECK(c->Delete("/v1/firewalls/" + fw_id).status == 204);
}

TEST_CASE("control-plane networking and storage: envelopes, attach, detach on instance delete") {
  ServeFixture srv;
  auto c = srv.Client();
  auto net = c->Post("/api/v1/networking",
                     {{"name", "n1"}, {"region", "ap-south"}, {"cidr", "192.168.0.0/24"}}, "n1");
  REQUIRE(net.status == 201);
  json n = net.json()["network"];
  CHECK(IsUuid(n["publicId"]));
  CHECK(n["regionKey"] == "ap-south");
  CHECK(n["cidr"] == "192.168.0.0/24");
  CHECK(n["status"] == "queued");
  CHECK(n["customerStatus"]["status"] == "pending");
  CHECK(
      c->Get("/api/v1/networking/" + n["publicId"].get<std::string>()).json()["network"]["name"] ==
      "n1");

  auto inst = c->Post("/api/v1/compute", InstanceBody("i1", "ap-south"), "i1");
  REQUIRE(inst.status == 201);
  std::string inst_id = inst.json()["instance"]["publicId"];
  auto vol = c->Post(
      "/api/v1/storage",
      {{"name", "v1"}, {"region", "ap-south"}, {"sizeGb", 10}, {"instanceId", inst_id}}, "v1");
  REQUIRE(vol.status == 201);
  json v = vol.json()["volume"];
  CHECK(v["sizeGb"] == 10);
  CHECK(v["instanceId"] == inst_id);
  CHECK(v["customerStatus"]["status"] == "pending");
  std::string vol_id = v["publicId"];
  auto lv = c->Get("/api/v1/storage");
  REQUIRE(lv.status == 200);
  CHECK(lv.json()["data"][0]["publicId"] == vol_id);

  // Grow only; detach and re-attach.
  auto grown = c->Patch("/api/v1/storage/" + vol_id, {{"sizeGb", 20}}, "grow");
  REQUIRE(grown.status == 200);
  CHECK(grown.json()["volume"]["sizeGb"] == 20);
  auto shrink = c->Patch("/api/v1/storage/" + vol_id, {{"sizeGb", 5}}, "shrink");
  CHECK(shrink.status == 400);
  CHECK(shrink.json()["error"]["message"].get<std::string>().find("sizeGb") == 0);
  auto other_region = c->Post("/api/v1/compute", InstanceBody("i2", "eu-central"), "i2");
  auto wrong =
      c->Patch("/api/v1/storage/" + vol_id,
               {{"instanceId", other_region.json()["instance"]["publicId"]}}, "attach-wrong");
  CHECK(wrong.status == 400);
  CHECK(wrong.json()["error"]["message"].get<std::string>().find("instanceId") == 0);

  // Deleting the instance detaches the volume and keeps it.
  auto del = c->Delete("/api/v1/compute/" + inst_id, "del-i1");
  REQUIRE(del.status == 202);
  CHECK(del.json()["instance"]["status"] == "deleting");
  CHECK(del.json()["instance"]["customerStatus"]["status"] == "deleting");
  auto kept = c->Get("/api/v1/storage/" + vol_id);
  REQUIRE(kept.status == 200);
  CHECK(kept.json()["volume"]["instanceId"] == nullptr);
  PollUntil([&] { return c->Get("/api/v1/compute/" + inst_id); },
            [](const HttpResult& h) { return h.status == 404; });
  CHECK(c->Get("/api/v1/compute/" + inst_id).status == 404);
  auto dv = c->Delete("/api/v1/storage/" + vol_id, "del-v1");
  CHECK(dv.status == 202);
  CHECK(dv.json()["volume"]["status"] == "deleting");
}

TEST_CASE("lifecycle actions: stop, start, reboot, a disallowed action is 409") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string id = c->Post("/api/v1/compute", InstanceBody(), "c").json()["instance"]["publicId"];
  auto status = [&] {
    return c->Get("/api/v1/compute/" + id).json()["instance"]["status"].get<std::string>();
  };
  PollUntil(status, [](const std::string& s) { return s == "running"; });
  REQUIRE(status() == "running");
  auto start =
      c->Request("POST", "/api/v1/compute/" + id + "/actions/start", "", {"Idempotency-Key: a1"});
  CHECK(start.status == 409);
  CHECK(start.json()["error"]["code"] == "action_not_allowed");
  CHECK(start.header("cache-control") == "no-store");
  auto stop =
      c->Request("POST", "/api/v1/compute/" + id + "/actions/stop", "", {"Idempotency-Key: a2"});
  REQUIRE(stop.status == 202);
  CHECK(stop.json()["instance"]["customerStatus"]["operation"] ==
        json({{"type", "stop"}, {"state", "in_progress"}}));
  PollUntil(status, [](const std::string& s) { return s == "stopped"; });
  auto stopped = c->Get("/api/v1/compute/" + id).json()["instance"];
  REQUIRE(stopped["status"] == "stopped");
  CHECK(stopped["customerStatus"]["status"] == "stopped");
  CHECK(stopped["customerStatus"]["actions"]["start"] == true);
  CHECK(c->Get("/v1/instances/" + id).json()["status"] == "stopped");
  auto start2 =
      c->Request("POST", "/api/v1/compute/" + id + "/actions/start", "{}", {"Idempotency-Key: a3"});
  REQUIRE(start2.status == 202);
  PollUntil(status, [](const std::string& s) { return s == "running"; });
  auto reboot =
      c->Request("POST", "/api/v1/compute/" + id + "/actions/reboot", "", {"Idempotency-Key: a4"});
  REQUIRE(reboot.status == 202);
  CHECK(reboot.json()["instance"]["status"] == "rebooting");
  PollUntil(status, [](const std::string& s) { return s == "running"; });
  CHECK(c->Get("/api/v1/compute/" + id).json()["instance"]["customerStatus"]["operation"] ==
        json({{"type", "reboot"}, {"state", "completed"}}));
  CHECK(
      c->Request("POST", "/api/v1/compute/" + id + "/actions/explode", "", {"Idempotency-Key: a5"})
          .status == 404);
  CHECK(c->Request("GET", "/api/v1/compute/" + id + "/actions/stop").status == 405);
}

TEST_CASE("catalog, healthz and metrics") {
  ServeFixture srv;
  auto c = srv.Client();
  auto regions = c->Get("/v1/regions").json()["data"];
  REQUIRE(regions.size() == 3);
  CHECK(regions[0]["key"] == "eu-central");
  CHECK(c->Get("/v1/plans").json()["data"][0]["key"] == "s-1vcpu-1gb");
  CHECK(c->Get("/v1/images").json()["data"][0]["key"] == "debian-12");
  HttpClient anonymous(srv.base(), "");
  auto h = anonymous.Get("/healthz");
  CHECK(h.status == 200);
  CHECK(h.json()["status"] == "ok");
  CHECK(anonymous.Get("/metrics").status == 401);
  c->Get("/v1/regions");
  auto m = c->Get("/metrics");
  REQUIRE(m.status == 200);
  CHECK(m.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
  // Well-formed text format, histograms included (ScrapeMetrics checks both).
  auto families = ScrapeMetrics(*c);
  // Every family docs/api.md lists, of its type and with its help; nothing else.
  const std::map<std::string, std::string> documented = {
      {"cairn_http_responses_total", "counter"},
      {"cairn_http_request_duration_seconds", "histogram"},
      {"cairn_open_connections", "gauge"},
      {"cairn_max_connections", "gauge"},
      {"cairn_connections_refused_total", "counter"},
      {"cairn_tls_handshake_failures_total", "counter"},
      {"cairn_mutations_in_flight", "gauge"},
      {"cairn_idempotent_replays_total", "counter"},
      {"cairn_faults_injected_total", "counter"},
      {"cairn_store_commits_total", "counter"},
      {"cairn_store_mutations_total", "counter"},
      {"cairn_lifecycle_transitions_total", "counter"}};
  std::ifstream in(std::string(CAIRN_SOURCE_DIR) + "/docs/api.md");
  std::string api_md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t section = api_md.find("\n## Metrics\n");
  REQUIRE(section != std::string::npos);
  const std::string metrics_md =
      api_md.substr(section, api_md.find("\n## ", section + 1) - section);
  for (const MetricFamily& f : families) {
    INFO(f.name);
    CHECK(documented.count(f.name) == 1);
    CHECK(metrics_md.find("`" + f.name) != std::string::npos);
  }
  for (const auto& [name, type] : documented) {
    INFO(name);
    const MetricFamily* f = FindFamily(families, name);
    REQUIRE(f != nullptr);
    CHECK(f->type == type);
    CHECK_FALSE(f->help.empty());
  }
  // Five answers of 200 on this connection, each counted before the next
  // request on it was read; the other client's two (a 200 and a 401) may
  // still be on their way.
  const double ok = FindSample(families, "cairn_http_responses_total", {{"code", "200"}})->value;
  CHECK(ok >= 5);
  CHECK(ok <= 6);
  const double all = FindSample(families, "cairn_http_request_duration_seconds_count")->value;
  CHECK(all >= 5);
  CHECK(all <= 7);
  CHECK(FindSample(families, "cairn_http_request_duration_seconds_bucket", {{"le", "0.0005"}}) !=
        nullptr);
  CHECK(FindSample(families, "cairn_http_request_duration_seconds_bucket", {{"le", "1"}}) !=
        nullptr);
  CHECK(PollUntil(
            [&] {
              return MetricValue(*c, "cairn_http_responses_total", {{"code", "401"}});
            },
            [](double v) { return v == 1; }) == 1);
  CHECK(FindSample(families, "cairn_max_connections")->value == 4096);
  CHECK(FindSample(families, "cairn_open_connections")->value >= 1);
  // The store's figures are read at each scrape.
  const double mutations = FindSample(families, "cairn_store_mutations_total")->value;
  const double commits = FindSample(families, "cairn_store_commits_total")->value;
  REQUIRE(c->Post("/api/v1/compute", InstanceBody("counted"), "metrics-1").status == 201);
  CHECK(MetricValue(*c, "cairn_store_mutations_total") >= mutations + 1);
  CHECK(MetricValue(*c, "cairn_store_commits_total") >= commits + 1);
  // Every raw status is listed from the start.
  CHECK(FindSample(families, "cairn_lifecycle_transitions_total", {{"to", "queued"}})->value == 0);
  CHECK(FindSample(families, "cairn_lifecycle_transitions_total", {{"to", "deleted"}})->value == 0);
}

TEST_CASE("auth: missing or bad token is 401, projects never see each other's resources") {
  ServeFixture srv;
  auto dev = srv.Client();
  auto other = srv.Client(kOtherToken);
  HttpClient nobody(srv.base(), "");
  HttpClient wrong(srv.base(), "cairn_wrong_token_0123456789abcdefghij");
  for (HttpClient* c : {&nobody, &wrong}) {
    auto r = c->Get("/v1/instances");
    CHECK(r.status == 401);
    CHECK(r.json()["error"]["code"] == "unauthorized");
    CHECK(r.json()["error"]["request_id"] == r.header("x-request-id"));
    CHECK(c->Post("/api/v1/compute", InstanceBody(), "k").status == 401);
  }
  std::string id = dev->Post("/api/v1/compute", InstanceBody(), "k").json()["instance"]["publicId"];
  auto hidden = other->Get("/api/v1/compute/" + id);
  CHECK(hidden.status == 404);
  CHECK(hidden.json()["error"]["code"] == "resource_not_found");
  CHECK(other->Patch("/api/v1/compute/" + id, {{"name", "x"}}, "p").status == 404);
  CHECK(other->Delete("/api/v1/compute/" + id, "d").status == 404);
  CHECK(other->Get("/api/v1/compute").json()["data"].empty());
  CHECK(other->Get("/v1/instances").json()["data"].empty());
  // A reference to another project's resource is as good as missing.
  std::string key =
      dev->Post("/v1/ssh_keys", {{"name", "k"}, {"public_key", kEd25519}}).json()["id"];
  json body = InstanceBody();
  body["ssh_keys"] = {key};
  auto ref = other->Post("/v1/instances", body);
  CHECK(ref.status == 400);
  CHECK(ref.json()["error"]["message"].get<std::string>().find("ssh_keys[0]") == 0);
  CHECK(dev->Get("/api/v1/compute/" + id).status == 200);
}

TEST_CASE("request ids: every response carries X-Request-ID, a sane client one is echoed") {
  ServeFixture srv;
  auto c = srv.Client();
  auto echoed = c->Request("GET", "/v1/regions", "", {"X-Request-ID: trace-abc.123_x"});
  CHECK(echoed.header("x-request-id") == "trace-abc.123_x");
  auto replaced = c->Request("GET", "/v1/nowhere", "", {"X-Request-ID: bad id with spaces"});
  CHECK(replaced.status == 404);
  CHECK(replaced.header("x-request-id") != "bad id with spaces");
  CHECK(replaced.json()["error"]["request_id"] == replaced.header("x-request-id"));
  CHECK(replaced.json()["error"]["code"] == "route_not_found");
}

TEST_CASE("errors: 404 route, 405 method, 413, 415, and every validation_error names its field") {
  ServeFixture srv;
  auto c = srv.Client();
  CHECK(c->Get("/v2/instances").status == 404);
  CHECK(c->Get("/v1/instances/inst_123").status == 404);
  auto m = c->Request("PUT", "/v1/instances");
  CHECK(m.status == 405);
  CHECK(m.json()["error"]["code"] == "method_not_allowed");
  CHECK(m.header("allow") == "GET, HEAD, POST");
  CHECK(c->Request("POST", "/v1/instances/inst_00000000000000000000000000000000", "{}").status ==
        405);

  std::string big = "{\"name\":\"" + std::string(1024 * 1024 + 10, 'a') + "\"}";
  auto tl = c->Request("POST", "/v1/instances", big);
  CHECK(tl.status == 413);
  CHECK(tl.json()["error"]["code"] == "payload_too_large");
  auto tl_echo = c->Request("POST", "/v1/instances", big, {"X-Request-ID: big-1"});
  CHECK(tl_echo.status == 413);
  CHECK(tl_echo.header("x-request-id") == "big-1");
  auto hl = c->Request("GET", "/v1/instances", "", {"X-Padding: " + std::string(20 * 1024, 'p')});
  CHECK(hl.status == 431);
  CHECK(c->Get("/v1/instances").status == 200);  // a fresh connection works

  auto ct =
      c->Request("POST", "/v1/instances", InstanceBody().dump(), {"Content-Type: text/plain"});
  CHECK(ct.status == 415);
  CHECK(ct.json()["error"]["code"] == "unsupported_media_type");
  CHECK(ct.header("cache-control") == "no-store");
  CHECK(c->Request("POST", "/v1/instances", InstanceBody().dump(),
                   {"Content-Type: application/json; charset=utf-8"})
            .status == 201);

  auto expect_field = [&](const std::string& path, const std::string& body,
                          const std::string& field) {
    auto r = c->Request("POST", path, body,
                        {"Idempotency-Key: v-" + std::to_string(std::hash<std::string>()(body))});
    INFO(path << " " << body);
    CHECK(r.status == 400);
    CHECK(r.json()["error"]["code"] == "validation_error");
    CHECK(r.json()["error"]["message"].get<std::string>().rfind(field, 0) == 0);
    CHECK(r.header("cache-control") == "no-store");
  };
  auto with = [](json j, const std::string& k, json v) {
    if (v.is_null())
      j.erase(k);
    else
      j[k] = v;
    return j.dump();
  };
  json ok = InstanceBody();
  expect_field("/v1/instances", "{not json", "body");
  expect_field("/v1/instances", "[1,2]", "body");
  expect_field("/v1/instances", with(ok, "name", nullptr), "name");
  expect_field("/v1/instances", with(ok, "name", 5), "name");
  expect_field("/v1/instances", with(ok, "name", ""), "name");
  expect_field("/v1/instances", with(ok, "region", "mars-1"), "region");
  expect_field("/v1/instances", with(ok, "plan", "huge"), "plan");
  expect_field("/v1/instances", with(ok, "image", "windows-95"), "image");
  expect_field("/v1/instances", with(ok, "colour", "blue"), "colour");
  expect_field("/v1/instances", with(ok, "status", "running"), "status");
  expect_field("/v1/instances", with(ok, "ssh_keys", "key_1"), "ssh_keys");
  expect_field("/v1/instances",
               with(ok, "ssh_keys", json({"key_00000000000000000000000000000000"})), "ssh_keys[0]");
  expect_field("/v1/instances", with(ok, "network", "net_00000000000000000000000000000000"),
               "network");
  expect_field("/api/v1/compute", with(ok, "region", 7), "region");
  json net = {{"name", "n"}, {"region", "eu-central"}, {"cidr", "10.0.0.0/16"}};
  expect_field("/v1/networks", with(net, "cidr", "10.0.0.1/16"), "cidr");
  expect_field("/v1/networks", with(net, "cidr", "10.0.0.0/33"), "cidr");
  expect_field("/v1/networks", with(net, "cidr", "300.0.0.0/16"), "cidr");
  expect_field("/v1/networks", with(net, "cidr", "banana"), "cidr");
  json rule = {{"direction", "inbound"},
               {"protocol", "tcp"},
               {"port", "22"},
               {"source", "0.0.0.0/0"},
               {"action", "allow"}};
  json fw = {{"name", "f"}, {"rules", {rule}}};
  expect_field("/v1/firewalls",
               with(fw, "rules",
                    json({with(rule, "port", "70000")}).dump() == ""
                        ? json()
                        : json::array({json::parse(with(rule, "port", "70000"))})),
               "rules[0].port");
  expect_field("/v1/firewalls",
               with(fw, "rules", json::array({json::parse(with(rule, "direction", "sideways"))})),
               "rules[0].direction");
  expect_field("/v1/firewalls",
               with(fw, "rules", json::array({json::parse(with(rule, "source", "nowhere"))})),
               "rules[0].source");
  expect_field("/v1/firewalls",
               with(fw, "rules", json::array({json::parse(with(rule, "extra", "x"))})),
               "rules[0].extra");
  json key = {{"name", "k"}, {"public_key", kEd25519}};
  expect_field("/v1/ssh_keys", with(key, "public_key", "ssh-ed25519 AAAA"), "public_key");
  expect_field("/v1/ssh_keys",
               with(key, "public_key",
                    "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7"),
               "public_key");
  expect_field("/v1/ssh_keys",
               with(key, "public_key",
                    "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----"),
               "public_key");
  expect_field("/v1/ssh_keys", with(key, "name", "PuTTY-User-Key-File-3: ssh-rsa"), "name");
  json vol = {{"name", "v"}, {"region", "eu-central"}, {"sizeGb", 10}};
  expect_field("/api/v1/storage", with(vol, "sizeGb", 0), "sizeGb");
  expect_field("/api/v1/storage", with(vol, "sizeGb", "10"), "sizeGb");
  expect_field("/api/v1/storage", with(vol, "instanceId", "00000000-0000-4000-8000-000000000000"),
               "instanceId");

  // PATCH: immutable fields are named; unknown fields too.
  std::string id = c->Post("/v1/instances", InstanceBody()).json()["id"];
  for (auto [field, value] : std::vector<std::pair<std::string, json>>{{"region", "us-east"},
                                                                       {"image", "ubuntu-24.04"},
                                                                       {"id", "inst_x"},
                                                                       {"created_at", "now"}}) {
    auto r = c->Patch("/v1/instances/" + id, {{field, value}});
    INFO(field);
    CHECK(r.status == 400);
    CHECK(r.json()["error"]["message"].get<std::string>().rfind(field + ": is immutable", 0) == 0);
  }
  auto imm = c->Patch("/api/v1/compute/" + id, {{"regionKey", "us-east"}}, "imm");
  CHECK(imm.status == 400);
  CHECK(imm.json()["error"]["message"].get<std::string>().rfind("regionKey", 0) == 0);
  // Bad list parameters.
  for (std::string q : {"limit=0", "limit=201", "limit=abc", "cursor=xyz", "cursor=%zz"}) {
    auto r = c->Get("/v1/instances?" + q);
    INFO(q);
    CHECK(r.status == 400);
    CHECK(r.json()["error"]["code"] == "validation_error");
  }
}

TEST_CASE("PATCH and DELETE while the action flag is false are 409 action_not_allowed") {
  ServeFixture srv({"--provision-delay", "1h"});
  auto c = srv.Client();
  std::string id = c->Post("/api/v1/compute", InstanceBody(), "c").json()["instance"]["publicId"];
  REQUIRE(c->Delete("/api/v1/compute/" + id, "d1").status == 202);
  // deleting: edit and delete are false.
  auto p = c->Patch("/api/v1/compute/" + id, {{"name", "late"}}, "p1");
  CHECK(p.status == 409);
  CHECK(p.json()["error"]["code"] == "action_not_allowed");
  auto d = c->Delete("/api/v1/compute/" + id, "d2");
  CHECK(d.status == 409);
  CHECK(d.json()["error"]["code"] == "action_not_allowed");
  auto stop =
      c->Request("POST", "/api/v1/compute/" + id + "/actions/stop", "", {"Idempotency-Key: s"});
  CHECK(stop.status == 409);
}

}  // namespace serve_api_test
