// `cairn validate` and `cairn serve` refuse the same values. The test walks
// every constraint of every schema in schemas/ (each kind's properties and
// the firewall rules' sub-properties), makes values just inside and just
// outside each bound (length, minimum/maximum, enum, format, pattern,
// items, required, unknown fields, if/then), runs each through the engine's
// validation (SchemaRegistry::Validate over the schema files, what `cairn
// validate` runs) and through a real `cairn serve` (POST to the kind's
// collection, and PATCH for editable fields, with the wire names of
// x-cairn.wire), and checks that both accept or both refuse.
//
// A constraint the walk has no generator for fails the test, so a schema
// cannot gain a limit that this test silently skips.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/schema/schema_registry.h"
#include "tests/server/serve_fixture.h"

namespace schema_agreement_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7 test@cairn";

// One value to try, and what it is (for the failure message).
struct Case {
  std::string what;
  json value;
};

std::string Repeat(const std::string& unit, int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += unit;
  return out;
}

std::string Uuid(const std::string& hex) {
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

// The error message of an answer, or "".
std::string ErrorMessage(const HttpResult& r) {
  json j = r.json();
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "";
  return j["error"].value("message", "");
}

bool IsValidationError(const HttpResult& r) {
  json j = r.json();
  return r.status == 400 && j.is_object() && j.contains("error") && j["error"].is_object() &&
         j["error"].value("code", "") == "validation_error";
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Resources of the kinds that references name, created on the server on
// demand: hex ids (UUID without hyphens) in creation order.
class ReferencePool {
 public:
  explicit ReferencePool(HttpClient* client) : client_(client) {}

  // The first `n` resources of `kind`, creating what is missing.
  const std::vector<std::string>& Hex(const std::string& kind, size_t n) {
    auto& have = hex_[kind];
    while (have.size() < n) {
      std::string key = "pool-" + kind + "-" + std::to_string(have.size());
      if (kind == "ssh_key") {
        auto r = client_->Post("/v1/ssh_keys", {{"name", key}, {"public_key", kEd25519}});
        REQUIRE(r.status == 201);
        have.push_back(r.json()["id"].get<std::string>().substr(4));
      } else if (kind == "instance") {
        auto r = client_->Post("/api/v1/compute", InstanceBody(key), key);
        REQUIRE(r.status == 201);
        have.push_back(Strip(r.json()["instance"]["publicId"]));
      } else if (kind == "network") {
        auto r =
            client_->Post("/api/v1/networking",
                          {{"name", key}, {"region", "eu-central"}, {"cidr", "10.77.0.0/16"}}, key);
        REQUIRE(r.status == 201);
        have.push_back(Strip(r.json()["network"]["publicId"]));
      } else {
        FAIL("no way to create a referenced " << kind);
      }
    }
    return have;
  }

  static std::string Prefix(const std::string& kind) {
    if (kind == "ssh_key") return "key";
    if (kind == "instance") return "inst";
    if (kind == "network") return "net";
    return kind;
  }

 private:
  static std::string Strip(const json& uuid) {
    std::string h;
    for (char c : uuid.get<std::string>()) {
      if (c != '-') h += c;
    }
    return h;
  }
  HttpClient* client_;
  std::map<std::string, std::vector<std::string>> hex_;
};

// Makes the cases for one property schema. `reference` is the kind the
// property's ids (or its items' ids) refer to, or empty.
class CaseMaker {
 public:
  CaseMaker(ReferencePool* pool, std::vector<std::string>* unhandled)
      : pool_(pool), unhandled_(unhandled) {}

  std::vector<Case> For(const std::string& where, const json& schema, const std::string& reference,
                        const json& valid_sample) {
    static const std::set<std::string> kKnown = {"type",
                                                 "description",
                                                 "minLength",
                                                 "maxLength",
                                                 "minimum",
                                                 "maximum",
                                                 "enum",
                                                 "format",
                                                 "pattern",
                                                 "x-cairn-prefix-length",
                                                 "items",
                                                 "uniqueItems",
                                                 "maxItems",
                                                 "minItems",
                                                 "properties",
                                                 "required",
                                                 "if",
                                                 "then",
                                                 "additionalProperties"};
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      if (!kKnown.count(it.key())) unhandled_->push_back(where + ": keyword " + it.key());
    }
    std::vector<Case> out;
    std::string type = schema.value("type", "");
    // A value of another type.
    if (type == "string") out.push_back({"a number", 5});
    if (type == "integer") out.push_back({"a string", "1"}), out.push_back({"a fraction", 1.5});
    if (type == "array") out.push_back({"a string", "x"});
    if (type == "object") out.push_back({"a string", "x"});
    // Probes whatever the schema says: values a server might refuse on its
    // own, which the schema would then be missing.
    if (type == "string") {
      for (const char* probe : {"", "a\tb", "a\u0085b", "fd00::/8", "any", "22"})
        out.push_back({std::string("probe ") + json(probe).dump(), probe});
      out.push_back({"probe of 65 characters", Repeat("a", 65)});
      out.push_back({"probe of 256 characters", Repeat("a", 256)});
    }
    if (type == "integer") {
      for (int64_t probe : {int64_t{-1}, int64_t{0}, int64_t{65536}, int64_t{1} << 40})
        out.push_back({"probe " + std::to_string(probe), probe});
    }

    if (schema.contains("minLength") || schema.contains("maxLength")) {
      int64_t lo = schema.value("minLength", 0), hi = schema.value("maxLength", -1);
      if (lo > 0) out.push_back({"minLength - 1", Repeat("a", lo - 1)});
      out.push_back({"minLength", Repeat("a", std::max<int64_t>(lo, 1))});
      if (hi >= 0) {
        out.push_back({"maxLength", Repeat("a", hi)});
        out.push_back({"maxLength + 1", Repeat("a", hi + 1)});
        // Lengths count characters, not bytes.
        out.push_back({"maxLength two-byte characters", Repeat("\u00e9", hi)});
        out.push_back({"maxLength + 1 two-byte characters", Repeat("\u00e9", hi + 1)});
      }
    }
    // Ascending (minimum first), so a PATCH of a size that may only grow
    // meets each value after the smaller ones.
    for (const char* k : {"minimum", "maximum"}) {
      if (!schema.contains(k)) continue;
      int64_t b = schema[k].get<int64_t>();
      out.push_back({std::string(k) + " - 1", b - 1});
      out.push_back({k, b});
      out.push_back({std::string(k) + " + 1", b + 1});
    }
    if (schema.contains("enum")) {
      for (const auto& e : schema["enum"]) out.push_back({"enum value " + e.dump(), e});
      std::string first = schema["enum"][0].get<std::string>();
      out.push_back({"not in enum", "nope"});
      out.push_back({"enum value in capitals", Upper(first)});
      out.push_back({"enum value with a space", first + " "});
    }
    if (schema.contains("format")) AddFormat(where, schema, &out);
    if (schema.contains("pattern")) AddPattern(where, reference, &out);
    if (type == "array") AddArray(where, schema, reference, valid_sample, &out);
    if (type == "object" && schema.contains("properties")) {
      unhandled_->push_back(where + ": nested object (walked by the caller only for rules)");
    }
    return out;
  }

 private:
  void AddFormat(const std::string& where, const json& schema, std::vector<Case>* out) {
    std::string f = schema["format"];
    if (f == "printable") {
      out->push_back({"tab", "a\tb"});
      out->push_back({"DEL",
                      "a\x7f"
                      "b"});
      out->push_back({"C1 control", "a\u0085b"});
      out->push_back({"no-break space", "a\u00a0b"});
      out->push_back({"letters beyond ASCII", "caf\u00e9"});
    } else if (f == "cidr") {
      int lo = 0, hi = 32;
      if (schema.contains("x-cairn-prefix-length")) {
        lo = schema["x-cairn-prefix-length"].value("minimum", 0);
        hi = schema["x-cairn-prefix-length"].value("maximum", 32);
      }
      out->push_back({"shortest prefix", "10.0.0.0/" + std::to_string(lo)});
      if (lo == 0) out->back().value = "0.0.0.0/0";
      out->push_back({"longest prefix", "10.0.0.0/" + std::to_string(hi)});
      if (lo > 0) out->push_back({"prefix one shorter", "10.0.0.0/" + std::to_string(lo - 1)});
      if (hi < 32) out->push_back({"prefix one longer", "10.0.0.0/" + std::to_string(hi + 1)});
      out->push_back({"prefix 33", "10.0.0.0/33"});
      out->push_back({"host bits set", "10.0.0.1/" + std::to_string(std::max(lo, 16))});
      out->push_back({"last host bit set", "10.0.1.0/" + std::to_string(std::max(lo, 16))});
      out->push_back({"IPv6", "fd00::/" + std::to_string(std::max(lo, 16))});
      out->push_back({"leading zero", "10.0.0.00/16"});
      out->push_back({"octet 256", "256.0.0.0/16"});
      out->push_back({"no prefix", "10.0.0.0"});
      out->push_back({"not an address", "nope/16"});
    } else if (f == "port-range") {
      for (const char* ok : {"1", "65535", "8000-8080", "80-80", "any"})
        out->push_back({std::string("port ") + ok, ok});
      for (const char* bad : {"0", "65536", "81-80", "022", "1-65536", "", "ANY", "22 "})
        out->push_back({std::string("port '") + bad + "'", bad});
    } else if (f == "openssh-public-key") {
      out->push_back({"ed25519 key", kEd25519});
      out->push_back(
          {"key without comment",
           "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7"});
      out->push_back({"key with a trailing newline", std::string(kEd25519) + "\n"});
      out->push_back({"truncated key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"});
      out->push_back(
          {"type mismatch",
           "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7"});
      out->push_back({"DSA key", "ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9E"});
      out->push_back({"two lines", std::string(kEd25519) + "\n" + kEd25519});
      out->push_back({"not base64", "ssh-ed25519 not*base64"});
    } else {
      unhandled_->push_back(where + ": format " + f);
    }
  }

  void AddPattern(const std::string& where, const std::string& reference, std::vector<Case>* out) {
    if (reference.empty()) {
      unhandled_->push_back(where + ": pattern on a field that is not a reference");
      return;
    }
    std::string hex = pool_->Hex(reference, 1)[0];
    std::string prefix = ReferencePool::Prefix(reference);
    out->push_back({"prefixed id", prefix + "_" + hex});
    out->push_back({"UUID id", Uuid(hex)});
    out->push_back({"UUID id in capitals", Upper(Uuid(hex))});
    out->push_back({"prefixed id in capitals", prefix + "_" + Upper(hex)});
    out->push_back({"id one digit short", prefix + "_" + hex.substr(1)});
    out->push_back({"id one digit long", prefix + "_" + hex + "0"});
    out->push_back(
        {"id of another kind", std::string(reference == "network" ? "inst" : "net") + "_" + hex});
    out->push_back({"UUID without hyphens", hex});
    out->push_back({"UUID with a newline", Uuid(hex) + "\n"});
    out->push_back({"empty id", ""});
  }

  void AddArray(const std::string& where, const json& schema, const std::string& reference,
                const json& valid_sample, std::vector<Case>* out) {
    if (!schema.contains("items")) return;
    // Items: each item case in a list of one.
    for (auto& c : For(where + "[]", schema["items"], reference, valid_sample)) {
      out->push_back({"one item: " + c.what, json::array({c.value})});
    }
    // Distinct valid items, as many as the bounds need.
    int64_t max = schema.value("maxItems", 2);
    auto items = [&](int64_t n) {
      json list = json::array();
      if (!reference.empty()) {
        const auto& hex = pool_->Hex(reference, static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          list.push_back(ReferencePool::Prefix(reference) + "_" + hex[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) list.push_back(valid_sample);
      }
      return list;
    };
    out->push_back({"empty list", json::array()});
    if (schema.value("uniqueItems", false)) {
      if (reference.empty()) unhandled_->push_back(where + ": uniqueItems without a reference");
      json twice = items(1);
      twice.push_back(twice[0]);
      out->push_back({"the same item twice", twice});
      out->push_back({"two distinct items", items(2)});
      // Not generated: one resource listed in both its id forms (prefixed
      // and UUID). The server refuses it as listed twice; JSON Schema's
      // uniqueItems compares the strings, so `cairn validate` cannot.
    }
    if (schema.contains("minItems")) {
      int64_t min = schema["minItems"];
      if (min > 0) out->push_back({"minItems - 1", items(min - 1)});
      out->push_back({"minItems", items(min)});
    }
    if (schema.contains("maxItems")) {
      out->push_back({"maxItems", items(max)});
      out->push_back({"maxItems + 1", items(max + 1)});
    }
  }

  ReferencePool* pool_;
  std::vector<std::string>* unhandled_;
};

// A valid spec of each kind (manifest names), with only what it requires.
json BaseSpec(const std::string& kind) {
  if (kind == "instance")
    return {
        {"name", "w"}, {"region", "eu-central"}, {"plan", "s-1vcpu-1gb"}, {"image", "debian-12"}};
  if (kind == "network") return {{"name", "n"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
  if (kind == "volume") return {{"name", "v"}, {"region", "eu-central"}, {"size_gb", 1}};
  if (kind == "ssh_key") return {{"name", "k"}, {"public_key", kEd25519}};
  if (kind == "firewall") {
    return {{"name", "f"},
            {"rules",
             {{{"direction", "inbound"},
               {"protocol", "tcp"},
               {"port", "22"},
               {"source", "0.0.0.0/0"},
               {"action", "allow"}}}}};
  }
  return json::object();
}

struct Wire {
  std::string collection;
  std::string envelope;                        // "" for the preview API
  std::map<std::string, std::string> request;  // manifest name -> wire name
};

Wire WireOf(const cairn::SchemaRegistry& reg, const std::string& kind) {
  const json& w = reg.Wire(kind);
  Wire out;
  out.collection = w["collection"];
  if (w["envelope"].is_string()) out.envelope = w["envelope"];
  for (auto it = w["fields"].begin(); it != w["fields"].end(); ++it) {
    if (it->contains("request")) out.request[it.key()] = (*it)["request"];
  }
  return out;
}

json ToWire(const Wire& wire, const json& spec) {
  json body = json::object();
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    auto name = wire.request.find(it.key());
    body[name == wire.request.end() ? it.key() : name->second] = *it;
  }
  return body;
}

}  // namespace

TEST_CASE("cairn validate and cairn serve accept and refuse the same values at every bound") {
  auto loaded = cairn::SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(loaded.ok());
  const cairn::SchemaRegistry& reg = **loaded;
  ServeFixture srv;
  auto client = srv.Client();
  ReferencePool pool(client.get());
  std::vector<std::string> unhandled, disagreements;
  CaseMaker maker(&pool, &unhandled);
  int request = 0, compared = 0, both_accept = 0;
  std::vector<std::string> accepted;  // what both accepted, for the record

  for (const std::string& kind : reg.kinds()) {
    const json& doc = reg.Document(kind);
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      static const std::set<std::string> kTopLevel = {
          "$schema",  "$id",        "title",  "description", "type", "additionalProperties",
          "required", "properties", "x-cairn"};
      if (!kTopLevel.count(it.key())) unhandled.push_back(kind + ": keyword " + it.key());
    }
    const Wire wire = WireOf(reg, kind);
    const json base = BaseSpec(kind);
    INFO(kind);
    REQUIRE_FALSE(base.empty());
    const auto& refs = reg.References(kind);
    auto reference_of = [&](const std::string& field) {
      auto it = refs.find(field);
      return it == refs.end() ? std::string() : it->second;
    };
    auto engine_accepts = [&](const json& spec) { return reg.Validate(kind, spec).empty(); };
    auto key = [&] { return "agree-" + std::to_string(++request); };
    // POST `spec`; 201 is acceptance, 400 validation_error refusal.
    auto server_post = [&](const json& spec, std::string* problem) {
      auto r = client->Post(wire.collection, ToWire(wire, spec), key());
      if (r.status == 201) return true;
      *problem = IsValidationError(r)
                     ? ErrorMessage(r)
                     : "unexpected answer " + std::to_string(r.status) + " " + r.body;
      return false;
    };
    auto compare = [&](const std::string& what, bool engine, bool server,
                       const std::string& server_message) {
      ++compared;
      if (engine && server) {
        ++both_accept;
        accepted.push_back(what);
      }
      if (engine != server) {
        disagreements.push_back(what + ": cairn validate " + (engine ? "accepts" : "refuses") +
                                ", cairn serve " + (server ? "accepts" : "refuses") +
                                (server_message.empty() ? "" : " (" + server_message + ")"));
      }
    };

    std::string msg;
    REQUIRE(engine_accepts(base));
    REQUIRE(server_post(base, &msg));
    // The PATCH target: created from the base spec, which holds the smallest
    // size, so every size the schema allows is a growth.
    auto made = client->Post(wire.collection, ToWire(wire, base), key());
    REQUIRE(made.status == 201);
    json made_body = wire.envelope.empty() ? made.json() : made.json()[wire.envelope];
    std::string id = made_body[reg.Wire(kind)["id_field"].get<std::string>()];
    const auto& immutable = reg.Immutable(kind);

    // Required fields and unknown fields.
    for (const auto& required : reg.RequiredFields(kind)) {
      json spec = base;
      spec.erase(required);
      msg.clear();
      compare(kind + " without " + required, engine_accepts(spec), server_post(spec, &msg), msg);
    }
    {
      json spec = base;
      spec["colour"] = "blue";
      msg.clear();
      compare(kind + " with an unknown field", engine_accepts(spec), server_post(spec, &msg), msg);
    }

    for (auto prop = doc["properties"].begin(); prop != doc["properties"].end(); ++prop) {
      const std::string field = prop.key();
      const json& schema = *prop;
      std::vector<std::pair<std::string, json>> specs;  // what, spec
      if (field == "rules") {
        // The rules list itself, then each rule property in the first rule.
        json rule_schema = schema["items"];
        for (auto it = rule_schema.begin(); it != rule_schema.end(); ++it) {
          static const std::set<std::string> kRule = {
              "type", "additionalProperties", "required", "properties", "if", "then"};
          if (!kRule.count(it.key())) unhandled.push_back(kind + ".rules[]: keyword " + it.key());
        }
        json sample = base["rules"][0];
        json list_schema = schema;
        list_schema.erase("items");
        list_schema["items"] = json::object();
        for (auto& c : maker.For(kind + ".rules", list_schema, "", sample)) {
          json spec = base;
          spec["rules"] = c.value;
          specs.emplace_back("rules: " + c.what, spec);
        }
        for (auto rp = rule_schema["properties"].begin(); rp != rule_schema["properties"].end();
             ++rp) {
          for (auto& c : maker.For(kind + ".rules[]." + rp.key(), *rp, "", nullptr)) {
            json spec = base;
            spec["rules"][0][rp.key()] = c.value;
            specs.emplace_back("rules[0]." + rp.key() + ": " + c.what, spec);
          }
        }
        for (const auto& required : rule_schema["required"]) {
          json spec = base;
          spec["rules"][0].erase(required.get<std::string>());
          specs.emplace_back("rules[0] without " + required.get<std::string>(), spec);
        }
        json extra = base;
        extra["rules"][0]["colour"] = "blue";
        specs.emplace_back("rules[0] with an unknown field", extra);
        // if {P in values} then {Q: const}: each P value with and without Q's
        // constant, and one P value outside the condition.
        if (rule_schema.contains("if")) {
          const json& cond = rule_schema["if"]["properties"];
          const json& then = rule_schema["then"]["properties"];
          REQUIRE(cond.size() == 1);
          REQUIRE(then.size() == 1);
          std::string p = cond.begin().key(), q = then.begin().key();
          json konst = then.begin()->at("const");
          for (const auto& v : cond.begin()->at("enum")) {
            json spec = base;
            spec["rules"][0][p] = v;
            spec["rules"][0][q] = konst;
            specs.emplace_back(
                "rules[0]: " + p + " " + v.dump() + " with " + q + " " + konst.dump(), spec);
            spec["rules"][0][q] = base["rules"][0][q];
            specs.emplace_back(
                "rules[0]: " + p + " " + v.dump() + " with " + q + " " + base["rules"][0][q].dump(),
                spec);
          }
          for (const auto& v : rule_schema["properties"][p]["enum"]) {
            if (std::find(cond.begin()->at("enum").begin(), cond.begin()->at("enum").end(), v) !=
                cond.begin()->at("enum").end())
              continue;
            json spec = base;
            spec["rules"][0][p] = v;
            spec["rules"][0][q] = konst;
            specs.emplace_back(
                "rules[0]: " + p + " " + v.dump() + " with " + q + " " + konst.dump(), spec);
          }
        }
      } else {
        for (auto& c : maker.For(kind + "." + field, schema, reference_of(field), nullptr)) {
          json spec = base;
          spec[field] = c.value;
          specs.emplace_back(field + ": " + c.what, spec);
        }
      }
      // Write-only fields are given on create only (serve_write_only_test.cc).
      const auto& write_only = reg.WriteOnly(kind);
      const bool editable =
          std::find(immutable.begin(), immutable.end(), field) == immutable.end() &&
          std::find(write_only.begin(), write_only.end(), field) == write_only.end();
      const std::string wire_field =
          wire.request.count(field) ? wire.request.at(field) : std::string(field);
      for (const auto& [what, spec] : specs) {
        const bool engine = engine_accepts(spec);
        msg.clear();
        compare(kind + " POST " + what, engine, server_post(spec, &msg), msg);
        if (!editable) continue;
        // PATCH only the field; the engine sees the whole spec it would make.
        auto r = client->Patch(wire.collection + "/" + id, {{wire_field, spec[field]}}, key());
        bool server = r.status == 200;
        std::string patch_msg =
            server || IsValidationError(r)
                ? ErrorMessage(r)
                : "unexpected answer " + std::to_string(r.status) + " " + r.body;
        compare(kind + " PATCH " + what, engine, server, patch_msg);
      }
    }
  }
  INFO("constraints without a generator:\n"
       << [&] {
            std::string s;
            for (const auto& u : unhandled) s += "  " + u + "\n";
            return s;
          }());
  CHECK(unhandled.empty());
  std::string all;
  for (const auto& d : disagreements) all += "  " + d + "\n";
  INFO(compared << " comparisons; disagreements:\n" << all);
  CHECK(disagreements.empty());
  // Both sides accept the values inside the bounds, not only refuse.
  std::string yes;
  for (const auto& a : accepted) yes += "  " + a + "\n";
  INFO(both_accept << " accepted by both:\n" << yes);
  CHECK(compared > 500);
  CHECK(both_accept > 100);
  for (const char* must : {"firewall POST instances: maxItems", "instance POST ssh_keys: maxItems",
                           "volume PATCH size_gb: maximum", "network POST cidr: longest prefix",
                           "firewall POST rules: maxItems", "instance POST network: UUID id"}) {
    INFO(must);
    CHECK(std::find(accepted.begin(), accepted.end(), must) != accepted.end());
  }
  CHECK(srv.process().running());
}

}  // namespace schema_agreement_test
