#include "providers/infra/kind_wire.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/providers/test_descriptors.h"
#include "tests/support/process.h"

namespace kind_wire_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

TEST_CASE("ParseKindWire reads routes, fields, references and readiness") {
  auto w = ParseKindWire(InstanceDescriptor());
  REQUIRE(w.ok());
  CHECK(w->kind == "instance");
  CHECK(w->collection == "/api/v1/compute");
  CHECK(*w->envelope == "instance");
  CHECK(w->id_field == "publicId");
  CHECK(w->pagination == PaginationShape::kNext);
  CHECK(*w->fields.at("region").request == "region");
  CHECK(*w->fields.at("region").response == "regionKey");
  CHECK_FALSE(w->fields.at("id").request);
  CHECK(w->fields.at("network").reference);
  CHECK_FALSE(w->fields.at("name").reference);
  CHECK(*w->ready_status == "running");
  CHECK(w->ready_timeout == std::chrono::seconds(600));
  CHECK(w->has_customer_status);
  CHECK(w->immutable.count("image") == 1);

  auto k = ParseKindWire(SshKeyDescriptor());
  REQUIRE(k.ok());
  CHECK_FALSE(k->envelope);
  CHECK(k->pagination == PaginationShape::kNextCursor);
  CHECK_FALSE(k->ready_status);
  CHECK_FALSE(k->has_customer_status);
}

TEST_CASE("ParseKindWire names what is wrong with a bad descriptor") {
  Value d = InstanceDescriptor();
  d["wire"]["pagination"] = "offset";
  auto w = ParseKindWire(d);
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().message().find("pagination") != std::string::npos);

  d = InstanceDescriptor();
  d["wire"].erase("collection");
  CHECK(ParseKindWire(d).status().message().find("collection") != std::string::npos);

  d = InstanceDescriptor();
  d["references"]["nope"] = "network";
  CHECK(ParseKindWire(d).status().message().find("nope") != std::string::npos);
}

TEST_CASE("MapResponse follows dotted paths and canonicalises references") {
  auto w = ParseKindWire(InstanceDescriptor());
  REQUIRE(w.ok());
  Value wire = Value::parse(R"({
    "publicId": "0123abcd-4567-89ef-0123-456789abcdef", "name": "web",
    "regionKey": "fra1", "planKey": "s-1", "imageKey": "debian-12",
    "networkId": "net_00112233445566778899aabbccddeeff",
    "sshKeys": ["key_aa"], "status": "queued",
    "customerStatus": {"status": "pending", "reasonCode": "provisioning_pending"},
    "createdAt": "2026-01-01T00:00:00Z"})");
  auto m = MapResponse(*w, wire);
  REQUIRE(m.ok());
  CHECK(m->id == "0123abcd-4567-89ef-0123-456789abcdef");
  CHECK(m->attributes["id"] == m->id);
  CHECK(m->attributes["region"] == "fra1");
  CHECK(m->attributes["status"] == "pending");  // customerStatus.status, not raw status
  CHECK(m->attributes["network"] == "00112233-4455-6677-8899-aabbccddeeff");
  CHECK(m->attributes["ssh_keys"] == Value::array({"key_aa"}));
  CHECK(m->attributes["created_at"] == "2026-01-01T00:00:00Z");
  CHECK_FALSE(m->attributes.contains("ipv4"));  // absent in the answer: absent here
  CHECK_FALSE(m->attributes.contains("customerStatus"));

  CHECK_FALSE(MapResponse(*w, Value::parse(R"({"name": "x"})")).ok());
}

TEST_CASE("MapRequest renames fields, drops computed ones, refuses unknown names") {
  auto w = ParseKindWire(InstanceDescriptor());
  REQUIRE(w.ok());
  auto body = MapRequest(*w, Value::parse(R"({"name": "web", "ssh_keys": ["k"],
                                               "network": "n", "id": "x"})"));
  REQUIRE(body.ok());
  CHECK(*body == Value::parse(R"({"name": "web", "sshKeys": ["k"], "networkId": "n"})"));
  auto bad = MapRequest(*w, Value::parse(R"({"nmae": "web"})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("nmae") != std::string::npos);
}

TEST_CASE("FindPath and SetPath address nested objects") {
  Value v = Value::object();
  SetPath(v, "a.b.c", 3);
  SetPath(v, "a.d", "x");
  CHECK(v == Value::parse(R"({"a": {"b": {"c": 3}, "d": "x"}})"));
  REQUIRE(FindPath(v, "a.b.c") != nullptr);
  CHECK(*FindPath(v, "a.b.c") == 3);
  CHECK(FindPath(v, "a.x") == nullptr);
  CHECK(FindPath(v, "a.d.e") == nullptr);
}

TEST_CASE("LoadKindDescriptors reads x-cairn from every schema file") {
  TempDir dir;
  WriteFile(dir.path() + "/instance.schema.json",
            Value{{"type", "object"}, {"x-cairn", InstanceDescriptor()}}.dump());
  WriteFile(dir.path() + "/ssh_key.schema.json",
            Value{{"type", "object"}, {"x-cairn", SshKeyDescriptor()}}.dump());
  WriteFile(dir.path() + "/common.schema.json", R"({"type": "object"})");
  WriteFile(dir.path() + "/openapi.yaml", "openapi: 3.1.0\n");
  auto kinds = LoadKindDescriptors(dir.path());
  REQUIRE(kinds.ok());
  CHECK(kinds->size() == 2);
  CHECK(kinds->at("instance") == InstanceDescriptor());

  WriteFile(dir.path() + "/broken.schema.json", "{");
  auto bad = LoadKindDescriptors(dir.path());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("broken.schema.json") != std::string::npos);

  CHECK_FALSE(LoadKindDescriptors(dir.path() + "/missing").ok());
}

TEST_CASE("the repository's schemas load, when present") {
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/schemas";
  if (!std::filesystem::exists(dir)) return;  // written on another branch
  auto kinds = LoadKindDescriptors(dir);
  REQUIRE(kinds.ok());
  for (const auto& [kind, descriptor] : *kinds) {
    INFO(kind);
    CHECK(ParseKindWire(descriptor).ok());
  }
}

}  // namespace kind_wire_test
