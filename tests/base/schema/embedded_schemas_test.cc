// The schemas compiled into cairn are schemas/ (the one source), and the
// registry built from them is the one the engine and `cairn serve` share.
#include "base/schema/embedded_schemas.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "base/schema/schema_registry.h"

namespace embedded_schemas_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace fs = std::filesystem;

TEST_CASE("the schemas built into cairn are exactly the files in schemas/") {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(CAIRN_SOURCE_DIR) / "schemas")) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".schema.json")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    files[name] = text.str();
  }
  REQUIRE(files.size() == 5);
  std::map<std::string, std::string> embedded(EmbeddedSchemas().begin(), EmbeddedSchemas().end());
  CHECK(embedded.size() == EmbeddedSchemas().size());  // no name twice
  for (const auto& [name, text] : files) {
    INFO(name);
    REQUIRE(embedded.count(name) == 1);
    CHECK(embedded[name] == text);
  }
  CHECK(embedded.size() == files.size());
}

TEST_CASE("SchemaRegistry::Embedded() is the registry of schemas/, parsed once and shared") {
  auto embedded = SchemaRegistry::Embedded();
  REQUIRE(embedded.ok());
  auto again = SchemaRegistry::Embedded();
  REQUIRE(again.ok());
  CHECK(embedded->get() == again->get());
  CHECK((*embedded)->dir() == "embedded schemas");

  auto from_files = SchemaRegistry::Load((fs::path(CAIRN_SOURCE_DIR) / "schemas").string());
  REQUIRE(from_files.ok());
  REQUIRE((*embedded)->kinds() == (*from_files)->kinds());
  for (const auto& kind : (*embedded)->kinds()) {
    INFO(kind);
    CHECK((*embedded)->Document(kind) == (*from_files)->Document(kind));
  }
}

}  // namespace embedded_schemas_test
