// The catalog GET /v1/regions, /v1/plans and /v1/images describe, and the
// schemas built into the server, agree with schemas/ (the one source).
#include "server/catalog.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "base/schema/schema_registry.h"
#include "server/embedded_schemas.h"

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

TEST_CASE("the schemas built into cairn serve are the files in schemas/") {
  const auto& embedded = server::EmbeddedSchemas();
  REQUIRE(embedded.size() == 5);
  for (const auto& [name, text] : embedded) {
    INFO(name);
    std::ifstream in(std::string(CAIRN_SOURCE_SCHEMA_DIR) + "/" + name, std::ios::binary);
    REQUIRE(in);
    std::stringstream file;
    file << in.rdbuf();
    CHECK(text == file.str());
  }
  auto reg = SchemaRegistry::FromDocuments(embedded, "embedded schemas");
  REQUIRE(reg.ok());
  CHECK((*reg)->kinds() ==
        std::vector<std::string>{"firewall", "instance", "network", "ssh_key", "volume"});
}

TEST_CASE("the catalog describes exactly the region, plan and image keys the schemas allow") {
  auto loaded = SchemaRegistry::FromDocuments(server::EmbeddedSchemas(), "embedded schemas");
  REQUIRE(loaded.ok());
  const SchemaRegistry& reg = **loaded;
  for (const char* kind : {"instance", "network", "volume"}) {
    INFO(kind);
    CHECK(Enum(reg, kind, "region") == Keys(server::kRegions));
  }
  CHECK(Enum(reg, "instance", "plan") == Keys(server::kPlans));
  CHECK(Enum(reg, "instance", "image") == Keys(server::kImages));
}
