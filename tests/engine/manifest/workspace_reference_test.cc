// ${workspace}: the workspace the stack is loaded for, a string known at
// load time, so count and names may depend on it; a misspelling suggests it.
#include <catch2/catch.hpp>

#include "engine/manifest/loader.h"

namespace workspace_reference_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

constexpr const char* kWorkspaceManifest =
    "kind: network\nname: app\ncount: '${workspace == \"prod\" ? 3 : 1}'\n"
    "spec: {name: 'net-${workspace}-${count.index}', region: eu-central, cidr: 10.0.0.0/16}\n"
    "---\nkind: output\nname: where\nvalue: ${workspace}\n";

LoadResult LoadFor(const std::string& yaml, const std::string& workspace) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  o.workspace = workspace;
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.code + ": " + d.summary + "\n";
  return out;
}

}  // namespace

TEST_CASE("workspace reference: count and names follow the workspace") {
  LoadResult prod = LoadFor(kWorkspaceManifest, "prod");
  INFO(Codes(prod));
  REQUIRE(prod.ok());
  CHECK(prod.config.workspace == "prod");
  REQUIRE(prod.config.resources.size() == 3);
  const ResourceConfig* third = prod.config.Find(*ResourceAddress::Parse("network.app[2]"));
  REQUIRE(third);
  CHECK(third->spec["name"] == "net-prod-2");
  REQUIRE(prod.config.outputs.size() == 1);
  CHECK(prod.config.outputs[0].value == "prod");

  LoadResult dev = LoadFor(kWorkspaceManifest, "dev");
  REQUIRE(dev.ok());
  REQUIRE(dev.config.resources.size() == 1);
  CHECK(dev.config.resources[0].spec["name"] == "net-dev-0");
}

TEST_CASE("workspace reference: default unless a workspace is given") {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  LoadResult r = LoadStackFromText({{"main.yaml", kWorkspaceManifest}}, o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(r.config.resources.size() == 1);
  CHECK(r.config.resources[0].spec["name"] == "net-default-0");
}

TEST_CASE("workspace reference: a misspelling suggests workspace") {
  LoadResult r = LoadFor("kind: output\nname: w\nvalue: ${workspce}\n", "dev");
  CHECK_FALSE(r.ok());
  CHECK(Codes(r).find("did you mean workspace?") != std::string::npos);
}

}  // namespace workspace_reference_test
