// The catalog GET /v1/regions, /v1/plans and /v1/images describe agrees
// with the schemas built into cairn (tests/base/schema/embedded_schemas_test.cc
// checks those against schemas/, the one source).
#include "server/catalog.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "base/schema/schema_registry.h"

namespace catalog_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::server::Ipv4Address;
using cairn::server::Ipv4HostSkipped;
using cairn::server::kIpv4PoolHosts;

namespace {

std::set<std::string> Enum(const SchemaRegistry& reg, const std::string& kind,
                           const std::string& field) {
  std::set<std::string> out;
  for (const auto& v : reg.Document(kind)["properties"][field]["enum"])
    out.insert(v.get<std::string>());
  return out;
}

template <typename Entries>
std::set<std::string> Keys(const Entries& entries) {
  std::set<std::string> out;
  for (const auto& e : entries) out.insert(std::string(e.key));
  return out;
}

}  // namespace

TEST_CASE("the catalog describes exactly the region, plan and image keys the schemas allow") {
  auto loaded = SchemaRegistry::Embedded();
  REQUIRE(loaded.ok());
  const SchemaRegistry& reg = **loaded;
  for (const char* kind : {"instance", "network", "volume"}) {
    INFO(kind);
    CHECK(Enum(reg, kind, "region") == Keys(server::kRegions));
  }
  CHECK(Enum(reg, "instance", "plan") == Keys(server::kPlans));
  CHECK(Enum(reg, "instance", "image") == Keys(server::kImages));
}

TEST_CASE("each region's address pool is a /12 of 100.64.0.0/10") {
  CHECK(Ipv4Address("eu-central", 1) == "100.64.0.1");
  // Past what a /16 held (64,516 addresses): the pool goes on.
  CHECK(Ipv4Address("eu-central", 65536 + 1) == "100.65.0.1");
  CHECK(Ipv4Address("eu-central", kIpv4PoolHosts - 2) == "100.79.255.254");
  CHECK(Ipv4Address("eu-central", kIpv4PoolHosts - 1).empty());  // the /12's broadcast
  CHECK(Ipv4Address("eu-central", 0).empty());
  CHECK(Ipv4Address("us-east", 1) == "100.80.0.1");
  CHECK(Ipv4Address("ap-south", 1) == "100.96.0.1");
  CHECK(Ipv4Address("mars-north", 1).empty());
  CHECK(Ipv4HostSkipped(256));
  CHECK(Ipv4HostSkipped(511));
  CHECK_FALSE(Ipv4HostSkipped(257));
}

}  // namespace catalog_test
