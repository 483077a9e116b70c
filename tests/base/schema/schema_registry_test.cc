#include "base/schema/schema_registry.h"

#include <catch2/catch.hpp>

#include "base/schema/formats.h"

namespace schema_registry_test {  // one namespace per test file: see tests/CMakeLists.txt

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
  CHECK(reg->Fields("instance") == std::vector<std::string>{"image", "name", "network", "plan",
                                                            "region", "ssh_keys", "user_data"});
  CHECK(reg->Immutable("instance") ==
        std::vector<std::string>{"region", "image", "network", "ssh_keys"});
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
  CHECK(reg->IdAlias("instance") == "inst_");
  CHECK(reg->IdAlias("network") == "net_");
  CHECK(reg->IdAlias("volume").empty());
}

TEST_CASE("a valid spec has no violations, references are not type-checked") {
  auto reg = Registry();
  CHECK(reg->Validate("instance", {{"name", "web"},
                                   {"region", "eu-central"},
                                   {"plan", "s-1vcpu-1gb"},
                                   {"image", "debian-12"},
                                   {"network", "${network.n.id}"},
                                   {"ssh_keys", {"${ssh_key.k.id}"}}})
            .empty());
  CHECK(reg->Validate("volume",
                      {{"name", "v"}, {"region", "eu-central"}, {"size_gb", "${volume.o.size_gb}"}})
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
  CHECK(IsCidr("10.20.0.7/32"));
  // What the server refuses, the format refuses: IPv6, host bits, leading zeros.
  CHECK_FALSE(IsCidr("2001:db8::/32"));
  CHECK_FALSE(IsCidr("10.0.0.1/16"));
  CHECK_FALSE(IsCidr("10.020.0.0/16"));
  CHECK_FALSE(IsCidr("10.20.0.0/016"));
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
      "network",
      {{"name", std::string(40, '\x97')}, {"region", "eu-central"}, {"cidr", "10.0.0.0/8"}});
  CHECK(v.empty());
  CHECK_FALSE(IsValidUtf8("caf\xe9"));
  CHECK(IsValidUtf8("caf\xc3\xa9"));
}

TEST_CASE("CIDR prefix bounds come from the schema, and each fault is named") {
  FormatLimits network{8, 29};
  CHECK(IsCidr("10.0.0.0/8", network));
  CHECK(IsCidr("10.0.0.8/29", network));
  CHECK_FALSE(IsCidr("10.0.0.0/7", network));
  CHECK_FALSE(IsCidr("10.0.0.0/30", network));
  CHECK(CheckFormat("cidr", "10.0.0.0/30", network)->expected ==
        "must have a prefix length from /8 to /29");
  CHECK(CheckFormat("cidr", "10.0.0.1/16")->expected ==
        "must be a network address, without host bits (did you mean 10.0.0.0/16?)");
  CHECK(CheckFormat("cidr", "fd00::/8")->expected.find("IPv6 is not offered") != std::string::npos);
  CHECK(CheckFormat("cidr", "nope")->expected == "must be a CIDR block such as 10.0.0.0/16");
  auto reg = Registry();
  CHECK(FormatLimitsOf(reg->Document("network")["properties"]["cidr"]).min_prefix == 8);
  CHECK(FormatLimitsOf(reg->Document("network")["properties"]["cidr"]).max_prefix == 29);
}

TEST_CASE("port ranges and printable text") {
  for (const char* ok : {"any", "1", "22", "65535", "8000-8080", "80-80"}) {
    INFO(ok);
    CHECK_FALSE(CheckFormat("port-range", ok));
  }
  for (const char* bad :
       {"", "0", "65536", "022", "+22", "22-", "-22", "90-80", "1-65536", "ANY", "22 ", "http"}) {
    INFO(bad);
    CHECK(CheckFormat("port-range", bad));
  }
  CHECK_FALSE(CheckFormat("printable", "caf\u00e9\u00a0web"));
  for (const char* bad : {"tab\there", "del\x7f", "c1\u0085", "nl\n"}) {
    INFO(bad);
    CHECK(CheckFormat("printable", bad)->expected == "must not contain control characters");
  }
}

TEST_CASE("OpenSSH public keys: the server's rules, with a precise reason") {
  CHECK_FALSE(IsOpenSshPublicKey(
      "ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq"));
  OpenSshPublicKey parts;
  REQUIRE_FALSE(ParseOpenSshPublicKey(std::string("  ") + kEd25519 + " \n", &parts));
  CHECK(parts.type == "ssh-ed25519");
  CHECK(parts.comment == "deploy@example");
  auto bad = ParseOpenSshPublicKey("ssh-ed25519 not-base64!", nullptr);
  REQUIRE(bad);
  CHECK(bad->reason == "key data is not valid base64");
  CHECK(bad->Precise() == "key data is not valid base64");
}

TEST_CASE("the server's limits are the schemas': names, catalog keys, sizes, rules, ids") {
  auto reg = Registry();
  auto predicates = [&](const std::string& kind, const Value& spec) {
    std::vector<std::string> out;
    for (const auto& v : reg->Validate(kind, spec, Expressions::kPlainText))
      out.push_back(PointerToFieldPath(v.pointer) + ": " + v.predicate);
    return out;
  };
  Value net = {{"name", std::string(64, 'n')}, {"region", "eu-central"}, {"cidr", "10.0.0.0/16"}};
  CHECK(predicates("network", net).empty());
  net["name"] = std::string(65, 'n');
  CHECK(predicates("network", net) ==
        std::vector<std::string>{"name: must be at most 64 characters long"});
  // Characters are code points: 64 two-byte characters fit.
  std::string wide;
  for (int i = 0; i < 64; ++i) wide += "\u00e9";
  net["name"] = wide;
  CHECK(predicates("network", net).empty());
  net["name"] = "n";
  net["region"] = "mars";
  CHECK(
      predicates("network", net) ==
      std::vector<std::string>{"region: must be one of \"eu-central\", \"us-east\", \"ap-south\""});
  CHECK(predicates("volume", {{"name", "v"}, {"region", "eu-central"}, {"size_gb", 16385}}) ==
        std::vector<std::string>{"size_gb: must be at most 16384"});
  Value rule = {{"direction", "inbound"},
                {"protocol", "icmp"},
                {"port", "22"},
                {"source", "0.0.0.0/0"},
                {"action", "allow"}};
  CHECK(predicates("firewall", {{"name", "f"}, {"rules", {rule}}}) ==
        std::vector<std::string>{
            "rules[0].port: must be \"any\" when protocol is \"icmp\" or \"any\""});
  CHECK(predicates("instance", {{"name", "w"},
                                {"region", "eu-central"},
                                {"plan", "s-1vcpu-1gb"},
                                {"image", "debian-12"},
                                {"network", "net_123"}}) ==
        std::vector<std::string>{"network: must be a network id"});
  // Plain text: a "${" in an API body is checked like any other text.
  CHECK(predicates("volume", {{"name", "v"}, {"region", "eu-central"}, {"size_gb", "${x}"}}) ==
        std::vector<std::string>{"size_gb: must be an integer"});
  CHECK(reg->Validate("volume", {{"name", "v"}, {"region", "eu-central"}, {"size_gb", "${x}"}})
            .empty());
}

TEST_CASE("a format over a value of the wrong type is a type error, not a failed validation") {
  auto reg = Registry();
  auto v = reg->Validate("network", {{"name", "n"}, {"region", "eu-central"}, {"cidr", {1}}});
  REQUIRE(v.size() == 1);
  CHECK(v[0].code == "wrong_type");
  CHECK(v[0].summary == "field \"cidr\" must be a string, not a list");
}

TEST_CASE("a registry loads from texts in memory the same as from a directory") {
  auto from_dir = Registry();
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& kind : from_dir->kinds())
    texts.emplace_back(kind + ".schema.json", from_dir->Document(kind).dump());
  auto mem = SchemaRegistry::FromDocuments(texts, "memory");
  REQUIRE(mem.ok());
  CHECK((*mem)->kinds() == from_dir->kinds());
  CHECK((*mem)->dir() == "memory");
  auto broken = SchemaRegistry::FromDocuments({{"x.schema.json", "{"}}, "memory");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().message() == "memory/x.schema.json: not valid JSON");
}

TEST_CASE("x-cairn.id_alias is a prefix ending in an underscore, or absent") {
  auto from_dir = Registry();
  Value doc = from_dir->Document("network");
  for (const Value& bad : {Value(7), Value(""), Value("net")}) {
    doc["x-cairn"]["id_alias"] = bad;
    auto r = SchemaRegistry::FromDocuments({{"network.schema.json", doc.dump()}}, "memory");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "memory/network.schema.json: x-cairn.id_alias must be a prefix ending in \"_\" "
          "(\"inst_\")");
  }
}

}  // namespace schema_registry_test
