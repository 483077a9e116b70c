#include "engine/manifest/generate.h"

#include <catch2/catch.hpp>

#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"
#include "tests/support/process.h"

namespace generate_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

TEST_CASE("generated manifests load back as the values they were written from") {
  auto registry = SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(registry.ok());
  std::vector<ExistingResource> docs;
  docs.push_back({*ResourceAddress::Parse("network.core"),
                  {{"id", "01234567-89ab-cdef-0123-456789abcdef"},
                   {"name", "odd ${name} \"quoted\" true"},
                   {"region", "eu-central"},
                   {"cidr", "10.0.0.0/16"},
                   {"status", "active"}}});
  docs.push_back({*ResourceAddress::Parse("instance.api"),
                  {{"name", "123"},
                   {"region", "eu-central"},
                   {"image", "debian-12"},
                   {"plan", "s-1vcpu-1gb"},
                   {"network", "net_0123456789abcdef0123456789abcdef"},  // its other spelling
                   {"ssh_keys", Value::array({"key_0123456789abcdef0123456789abcdef"})},
                   {"ipv4", "100.64.0.1"}}});
  std::string text = GenerateManifests(docs, **registry,
                                       {{"01234567-89ab-cdef-0123-456789abcdef", "network.core"}});
  CHECK(text.find("status") == std::string::npos);  // computed
  CHECK(text.find("ipv4") == std::string::npos);
  CHECK(text.find("id:") == std::string::npos);

  TempDir dir;
  WriteFile(dir.path() + "/gen.yaml", text);
  LoadOptions options;
  options.paths = {dir.path()};
  LoadResult r = LoadStack(options);
  INFO(text);
  std::string diagnostics;
  for (const auto& d : r.diagnostics) diagnostics += d.code + ": " + d.summary + "\n";
  INFO(diagnostics);
  REQUIRE(r.ok());
  const ResourceConfig* net = r.config.Find(*ResourceAddress::Parse("network.core"));
  REQUIRE(net != nullptr);
  CHECK(ResolveReferences(net->spec, nullptr)["name"] == "odd ${name} \"quoted\" true");
  const ResourceConfig* api = r.config.Find(*ResourceAddress::Parse("instance.api"));
  REQUIRE(api != nullptr);
  CHECK(api->spec["name"] == "123");                    // still a string
  CHECK(api->spec["network"] == "${network.core.id}");  // a known id, as a reference
  CHECK(api->spec["ssh_keys"] ==
        Value::array({"key_0123456789abcdef0123456789abcdef"}));  // an unknown one, as it is
  REQUIRE(api->depends_on.size() == 1);
  CHECK(api->depends_on[0].ToString() == "network.core");
}

}  // namespace generate_test
