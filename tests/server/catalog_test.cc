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

}  // namespace catalog_test
