#include "engine/schema/schema_registry.h"

#include <catch2/catch.hpp>

#include "engine/schema/formats.h"

using namespace cairn;

namespace {

std::shared_ptr<const SchemaRegistry> Registry() {
  auto r = SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(r.ok());
  return *r;
}

const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnTeJ4cv3DIaWIqPkOPGOGfkr1jBWHybmrVyQxFyV4V "
    "deploy@example";

}  // namespace

TEST_CASE("the registry reads the kinds and their x-cairn metadata from the schema files") {
  auto reg = Registry();
  CHECK(reg->kinds() ==
        std::vector<std::string>{"firewall", "instance", "network", "ssh_key", "volume"});
  CHECK(reg->Fields("instance") ==
        std::vector<std::string>{"image", "name", "network", "plan", "region", "ssh_keys"});
  CHECK(reg->Immutable("instance") ==
        std::vector<std::string>{"region", "image", "network", "ssh_keys"});
  CHECK(reg->Editable("instance") == std::vector<std::string>{"name", "plan"});
  CHECK(reg->Editable("volume") == std::vector<std::string>{"instance", "name", "size_gb"});
  CHECK(reg->Immutable("firewall").empty());
  CHECK(reg->References("instance").at("ssh_keys") == "ssh_key");
  CHECK(reg->IsComputed("ssh_key", "fingerprint"));
  CHECK(reg->HasAttribute("instance", "ipv4"));
  CHECK(reg->HasAttribute("instance", "plan"));
  CHECK_FALSE(reg->HasAttribute("instance", "fingerprint"));
  CHECK(reg->Wire("instance")["fields"]["status"]["response"] == "customerStatus.status");
  CHECK(reg->Wire("ssh_key")["envelope"].is_null());
  CHECK(reg->Wire("volume")["fields"]["size_gb"]["request"] == "sizeGb");
  CHECK_FALSE(reg->HasKind("variable"));
}

TEST_CASE("a valid spec has no violations, references are not type-checked") {
  auto reg = Registry();
  CHECK(reg->Validate("instance", {{"name", "web"},
                                   {"region", "eu"},
                                   {"plan", "p"},
                                   {"image", "i"},
                                   {"network", "${network.n.id}"},
                                   {"ssh_keys", {"${ssh_key.k.id}"}}})
            .empty());
  CHECK(
      reg->Validate("volume", {{"name", "v"}, {"region", "eu"}, {"size_gb", "${volume.o.size_gb}"}})
          .empty());
  CHECK(reg->Validate("ssh_key", {{"name", "k"}, {"public_key", kEd25519}}).empty());
}

TEST_CASE("violations carry a code, a JSON pointer and a readable summary") {
  auto reg = Registry();
  auto v = reg->Validate("firewall", {{"name", "f"},
                                      {"rules",
                                       {{{"direction", "in"},
                                         {"protocol", "tcp"},
                                         {"port", 22},
                                         {"source", "0.0.0.0/99"},
                                         {"action", "allow"},
                                         {"extra", 1}}}}});
  std::vector<std::string> got;
  for (const auto& x : v) got.push_back(x.code + " " + x.pointer + " " + x.summary);
  std::sort(got.begin(), got.end());
  CHECK(got ==
        std::vector<std::string>{
            "invalid_format /rules/0/source field \"rules[0].source\" must be a CIDR block such as "
            "10.0.0.0/16",
            "invalid_value /rules/0/direction field \"rules[0].direction\" must be one of "
            "\"inbound\", "
            "\"outbound\"",
            "unknown_field /rules/0/extra unknown field \"extra\" in rules[0]",
            "wrong_type /rules/0/port field \"rules[0].port\" must be a string, not an integer"});
  auto m = reg->Validate("volume", {{"name", "v"}, {"size_gb", 0}});
  REQUIRE(m.size() == 2);
  std::sort(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.code < b.code; });
  CHECK(m[0].code == "missing_field");
  CHECK(m[0].summary == "missing required field \"region\" in volume spec");
  CHECK(m[0].pointer == "");
  CHECK(m[1].code == "out_of_range");
  CHECK(m[1].summary == "field \"size_gb\" must be at least 1");
}

TEST_CASE("CIDR and OpenSSH public key formats") {
  CHECK(IsCidr("10.20.0.0/16"));
  CHECK(IsCidr("0.0.0.0/0"));
  CHECK(IsCidr("2001:db8::/32"));
  CHECK_FALSE(IsCidr("10.20.0.0/33"));
  CHECK_FALSE(IsCidr("10.20.0/16"));
  CHECK_FALSE(IsCidr("10.20.0.0"));
  CHECK_FALSE(IsCidr("10.20.0.0/"));
  CHECK_FALSE(IsCidr("10.20.0.0/-1"));
  CHECK(IsOpenSshPublicKey(kEd25519));
  CHECK(IsOpenSshPublicKey(std::string(kEd25519) + "\n"));
  CHECK_FALSE(IsOpenSshPublicKey(
      "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIHnTeJ4cv3DIaWIqPkOPGOGfkr1jBWHybmrVyQxFyV4V"));
  CHECK_FALSE(IsOpenSshPublicKey("ssh-ed25519 not-base64!"));
  CHECK_FALSE(IsOpenSshPublicKey("ssh-ed25519"));
  CHECK_FALSE(IsOpenSshPublicKey("-----BEGIN OPENSSH PRIVATE KEY-----"));
}

TEST_CASE("loading a missing schema directory fails with NotFound") {
  auto r = SchemaRegistry::Load("/nonexistent/schemas");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
}

TEST_CASE("validation survives strings that are not UTF-8") {
  auto reg = Registry();
  auto v = reg->Validate(
      "network", {{"name", std::string(40, '\x97')}, {"region", "eu"}, {"cidr", "10.0.0.0/8"}});
  CHECK(v.empty());
  CHECK_FALSE(IsValidUtf8("caf\xe9"));
  CHECK(IsValidUtf8("caf\xc3\xa9"));
}
