// End-to-end: the infra provider over libcurl against a real `cairn serve`.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "base/clock.h"
#include "base/redact.h"
#include "providers/infra/canonical_id.h"
#include "providers/infra/curl_transport.h"
#include "providers/infra/infra_provider.h"
#include "tests/providers/test_descriptors.h"
#include "tests/support/process.h"

namespace infra_serve_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using namespace std::chrono_literals;

namespace {

const std::string kServeToken = "cairn_provider_itest_token_0123456789";
const char* kPublicKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7 test@cairn";

// `cairn serve` on an ephemeral loopback port, provisioning without delay.
class Serve {
 public:
  explicit Serve(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        CairnBinary(),         "serve",       "--listen",  "127.0.0.1:0",       "--data-dir",
        dir_.path() + "/data", "--dev-token", kServeToken, "--provision-delay", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<ChildProcess>(argv);
    auto line = proc_->ReadLine(30s);
    INFO("stderr: " << proc_->Stderr());
    REQUIRE(line.has_value());
    const std::string prefix = "listening on ";
    REQUIRE(line->rfind(prefix, 0) == 0);
    endpoint_ = line->substr(prefix.size());
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> proc_;
  std::string endpoint_;
};

// The repository's descriptors when this branch has them, else the inline
// ones of the same shape.
std::map<std::string, Value> Kinds() {
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/schemas";
  if (std::filesystem::exists(dir)) {
    auto loaded = LoadKindDescriptors(dir);
    REQUIRE(loaded.ok());
    if (loaded->size() == 5) return *loaded;
  }
  return TestKinds();
}

struct Client {
  CurlTransport transport;
  std::unique_ptr<InfraProvider> provider;
  int sequence = 0;

  explicit Client(const std::string& endpoint, int page_limit = 200) {
    InfraProvider::Options o;
    o.endpoint = endpoint;
    o.token = kServeToken;
    o.operation_deadline = 120s;
    o.retry_backoff = {10ms, 200ms, 2.0};
    o.poll_backoff = {5ms, 100ms, 1.5};
    o.page_limit = page_limit;
    provider = std::make_unique<InfraProvider>(o, Kinds(), transport, SystemClock());
    REQUIRE(provider->descriptor_status().ok());
  }

  std::string NextKey(const std::string& what) {
    return "itest/" + what + "/" + std::to_string(++sequence);
  }

  RemoteResource Create(const std::string& kind, Value spec) {
    auto m = provider->Prepare({kind, Action::kCreate, "", std::move(spec)});
    REQUIRE(m.ok());
    auto r = provider->Create({*m, NextKey(kind)}, {});
    INFO(r.status.ToString());
    REQUIRE(r.status.ok());
    REQUIRE(r.resource);
    auto ready = provider->Wait({kind, r.resource->id, WaitTarget::kReady, 60s}, {});
    INFO(ready.status.ToString());
    REQUIRE(ready.status.ok());
    REQUIRE(ready.resource);
    return *ready.resource;
  }

  RemoteResource Update(const std::string& kind, const std::string& id, Value changes) {
    auto m = provider->Prepare({kind, Action::kUpdate, id, std::move(changes)});
    REQUIRE(m.ok());
    auto r = provider->Update({*m, NextKey(kind)}, {});
    INFO(r.status.ToString());
    REQUIRE(r.status.ok());
    auto ready = provider->Wait({kind, id, WaitTarget::kReady, 60s}, {});
    INFO(ready.status.ToString());
    REQUIRE(ready.status.ok());
    return *ready.resource;
  }

  void Delete(const std::string& kind, const std::string& id) {
    auto m = provider->Prepare({kind, Action::kDelete, id, {}});
    REQUIRE(m.ok());
    auto r = provider->Delete({*m, NextKey(kind)}, {});
    INFO(r.status.ToString());
    REQUIRE(r.status.ok());
    CHECK_FALSE(r.already_gone);
    auto gone = provider->Wait({kind, id, WaitTarget::kDeleted, 60s}, {});
    INFO(gone.status.ToString());
    REQUIRE(gone.status.ok());
    auto read = provider->Read({kind, id}, {});
    REQUIRE(read.status.ok());
    CHECK_FALSE(read.resource);
  }

  std::vector<RemoteResource> List(const std::string& kind, int* requests = nullptr) {
    auto r = provider->List({kind}, {});
    INFO(r.status.ToString());
    REQUIRE(r.status.ok());
    if (requests) *requests = r.requests;
    return r.resources;
  }
};

bool Listed(const std::vector<RemoteResource>& all, const std::string& id) {
  for (const auto& r : all) {
    if (r.id == id) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("serve: every kind through create, read, list, update, wait and delete") {
  Serve serve;
  Client c(serve.endpoint());

  auto key = c.Create("ssh_key", {{"name", "deploy"}, {"public_key", kPublicKey}});
  CHECK(key.id.rfind("key_", 0) == 0);
  CHECK(key.attributes["public_key"] == kPublicKey);
  CHECK(key.attributes["fingerprint"].is_string());

  auto net =
      c.Create("network", {{"name", "core"}, {"region", "eu-central"}, {"cidr", "10.10.0.0/16"}});
  CHECK(IsUuid(net.id));
  CHECK(net.attributes["status"] == "running");
  CHECK(net.attributes["region"] == "eu-central");

  // References in the preview form are accepted and come back canonical.
  std::string net_preview =
      "net_" + std::string(net.id).erase(8, 1).erase(12, 1).erase(16, 1).erase(20, 1);
  auto inst = c.Create("instance", {{"name", "web"},
                                    {"region", "eu-central"},
                                    {"plan", "s-1vcpu-1gb"},
                                    {"image", "debian-12"},
                                    {"network", net_preview},
                                    {"ssh_keys", Value::array({key.id})}});
  CHECK(IsUuid(inst.id));
  CHECK(inst.attributes["status"] == "running");
  CHECK(inst.attributes["network"] == net.id);
  CHECK(inst.attributes["ssh_keys"] == Value::array({key.id}));
  CHECK(inst.attributes["plan"] == "s-1vcpu-1gb");

  auto fw = c.Create("firewall", {{"name", "web-in"},
                                  {"rules", Value::array({{{"direction", "inbound"},
                                                           {"protocol", "tcp"},
                                                           {"port", "443"},
                                                           {"source", "0.0.0.0/0"},
                                                           {"action", "allow"}}})},
                                  {"instances", Value::array({inst.id})}});
  CHECK(fw.id.rfind("fw_", 0) == 0);
  // The preview API answers inst_ ids; the provider hands back the canonical UUID.
  CHECK(fw.attributes["instances"] == Value::array({inst.id}));

  auto vol = c.Create(
      "volume",
      {{"name", "data"}, {"region", "eu-central"}, {"size_gb", 10}, {"instance", inst.id}});
  CHECK(vol.attributes["size_gb"] == 10);
  CHECK(vol.attributes["instance"] == inst.id);

  // Reads and lists agree.
  auto read = c.provider->Read({"instance", inst.id}, {});
  REQUIRE(read.status.ok());
  REQUIRE(read.resource);
  CHECK(read.resource->attributes == inst.attributes);
  CHECK(Listed(c.List("ssh_key"), key.id));
  CHECK(Listed(c.List("network"), net.id));
  CHECK(Listed(c.List("instance"), inst.id));
  CHECK(Listed(c.List("firewall"), fw.id));
  CHECK(Listed(c.List("volume"), vol.id));
  auto named = c.provider->FindByName("ssh_key", "deploy", {});
  REQUIRE(named.status.ok());
  REQUIRE(named.resources.size() == 1);
  CHECK(named.resources[0].id == key.id);

  // Updates.
  CHECK(c.Update("instance", inst.id, {{"plan", "s-2vcpu-4gb"}}).attributes["plan"] ==
        "s-2vcpu-4gb");
  CHECK(c.Update("network", net.id, {{"name", "core-2"}}).attributes["name"] == "core-2");
  CHECK(c.Update("volume", vol.id, {{"size_gb", 20}}).attributes["size_gb"] == 20);
  CHECK(c.Update("ssh_key", key.id, {{"name", "deploy-2"}}).attributes["name"] == "deploy-2");
  CHECK(c.Update("firewall", fw.id, {{"rules", Value::array()}}).attributes["rules"] ==
        Value::array());

  // A 4xx carries the server's code.
  auto shrink = c.provider->Prepare({"volume", Action::kUpdate, vol.id, {{"size_gb", 5}}});
  REQUIRE(shrink.ok());
  auto refused = c.provider->Update({*shrink, "itest/shrink"}, {});
  CHECK(refused.status.code() == StatusCode::kInvalidArgument);
  REQUIRE_FALSE(refused.diagnostics.empty());
  CHECK(refused.diagnostics.back().code == "validation_error");

  // Deletes, dependents first.
  c.Delete("firewall", fw.id);
  c.Delete("volume", vol.id);
  c.Delete("instance", inst.id);
  c.Delete("network", net.id);
  c.Delete("ssh_key", key.id);
  for (const char* kind : {"ssh_key", "network", "instance", "firewall", "volume"}) {
    INFO(kind);
    CHECK(c.List(kind).empty());
  }
}

TEST_CASE("serve: a re-sent create is replayed, not repeated") {
  Serve serve;
  Client c(serve.endpoint());
  for (const char* kind : {"network", "ssh_key"}) {
    INFO(kind);
    Value spec = std::string(kind) == "network"
                     ? Value{{"name", "n"}, {"region", "us-east"}, {"cidr", "10.0.0.0/24"}}
                     : Value{{"name", "k"}, {"public_key", kPublicKey}};
    auto m = c.provider->Prepare({kind, Action::kCreate, "", spec});
    REQUIRE(m.ok());
    const std::string key = std::string("itest/replay/") + kind;
    auto first = c.provider->Create({*m, key}, {});
    REQUIRE(first.status.ok());
    CHECK_FALSE(first.replayed);
    auto again = c.provider->Create({*m, key}, {});
    REQUIRE(again.status.ok());
    CHECK(again.replayed);
    CHECK(again.resource->id == first.resource->id);
    CHECK(c.List(kind).size() == 1);
  }
}

TEST_CASE("serve: both pagination shapes are read to the end") {
  Serve serve;
  Client c(serve.endpoint(), /*page_limit=*/2);
  for (int i = 0; i < 5; ++i) {
    c.Create("ssh_key", {{"name", "k" + std::to_string(i)}, {"public_key", kPublicKey}});
    c.Create("network", {{"name", "n" + std::to_string(i)},
                         {"region", "eu-central"},
                         {"cidr", "10." + std::to_string(i) + ".0.0/16"}});
  }
  int requests = 0;
  CHECK(c.List("ssh_key", &requests).size() == 5);
  CHECK(requests == 3);
  CHECK(c.List("network", &requests).size() == 5);
  CHECK(requests == 3);
}

TEST_CASE("serve: the token is refused when wrong, and never shown") {
  Serve serve;
  CurlTransport transport;
  InfraProvider::Options o;
  o.endpoint = serve.endpoint();
  o.token = "cairn_wrong_token_000000000000000000";
  InfraProvider p(o, Kinds(), transport, SystemClock());
  auto r = p.List({"instance"}, {});
  CHECK(r.status.code() == StatusCode::kFailedPrecondition);
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics[0].code == "unauthorized");
  CHECK(r.status.message().find(o.token) == std::string::npos);
  ClearSecretsForTesting();
}

TEST_CASE("serve: with injected faults every create lands exactly once") {
  Serve serve({"--faults",
               "error500=0.1,error503=0.1,error429=0.05,drop_before=0.1,drop_after=0.1,seed=7"});
  Client c(serve.endpoint());
  std::set<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    ids.insert(c.Create("network", {{"name", "n" + std::to_string(i)},
                                    {"region", "eu-central"},
                                    {"cidr", "10." + std::to_string(i) + ".0.0/16"}})
                   .id);
    ids.insert(
        c.Create("ssh_key", {{"name", "k" + std::to_string(i)}, {"public_key", kPublicKey}}).id);
  }
  CHECK(ids.size() == 16);
  auto networks = c.List("network");
  auto keys = c.List("ssh_key");
  CHECK(networks.size() == 8);
  CHECK(keys.size() == 8);
  std::set<std::string> names;
  for (const auto& r : networks) names.insert(r.attributes["name"].get<std::string>());
  for (const auto& r : keys) names.insert(r.attributes["name"].get<std::string>());
  CHECK(names.size() == 16);  // no duplicates
  for (const auto& r : networks) c.Delete("network", r.id);
  CHECK(c.List("network").empty());
}

}  // namespace infra_serve_test
