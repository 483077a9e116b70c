#include "providers/infra/canonical_id.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"

namespace canonical_id_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("CanonicalId maps both forms of an instance or network id to the UUID") {
  const std::string uuid = "0123abcd-4567-89ef-0123-456789abcdef";
  CHECK(CanonicalId("inst_0123abcd456789ef0123456789abcdef") == uuid);
  CHECK(CanonicalId("net_0123abcd456789ef0123456789abcdef") == uuid);
  CHECK(CanonicalId(uuid) == uuid);
  CHECK(CanonicalId("0123ABCD-4567-89EF-0123-456789ABCDEF") == uuid);
  CHECK(CanonicalId(CanonicalId("inst_0123abcd456789ef0123456789abcdef")) == uuid);
}

TEST_CASE("CanonicalId leaves other ids alone") {
  CHECK(CanonicalId("key_0123abcd456789ef0123456789abcdef") ==
        "key_0123abcd456789ef0123456789abcdef");
  CHECK(CanonicalId("fw_0123abcd456789ef0123456789abcdef") ==
        "fw_0123abcd456789ef0123456789abcdef");
  CHECK(CanonicalId("inst_0123") == "inst_0123");  // too short
  CHECK(CanonicalId("inst_0123abcd456789ef0123456789abcdeg") ==
        "inst_0123abcd456789ef0123456789abcdeg");  // not hex
  CHECK(CanonicalId("") == "");
}

TEST_CASE("IsSafePathId accepts API ids and refuses anything that could change the route") {
  CHECK(IsSafePathId("0123abcd-4567-89ef-0123-456789abcdef"));
  CHECK(IsSafePathId("key_0123abcd456789ef0123456789abcdef"));
  CHECK_FALSE(IsSafePathId(""));
  CHECK_FALSE(IsSafePathId(".."));
  CHECK_FALSE(IsSafePathId("a/b"));
  CHECK_FALSE(IsSafePathId("a?b"));
  CHECK_FALSE(IsSafePathId("a b"));
  CHECK_FALSE(IsSafePathId("%2e%2e"));
}

TEST_CASE("CanonicalIdsIn rewrites the inst_ and net_ ids of a message, as whole words") {
  const std::string uuid = "0123abcd-4567-89ef-0123-456789abcdef";
  CHECK(CanonicalIdsIn("the network is used by 1 instance(s), e.g. "
                       "inst_0123abcd456789ef0123456789abcdef; delete or move them first") ==
        "the network is used by 1 instance(s), e.g. " + uuid + "; delete or move them first");
  CHECK(CanonicalIdsIn("net_0123abcd456789ef0123456789abcdef") == uuid);
  // Not whole words, not 32 hex digits, other prefixes: as they are.
  for (const char* same :
       {"xinst_0123abcd456789ef0123456789abcdef", "inst_0123abcd456789ef0123456789abcdef0",
        "inst_0123", "key_0123abcd456789ef0123456789abcdef", "no ids here", ""}) {
    CHECK(CanonicalIdsIn(same) == same);
  }
}

TEST_CASE("the provider's id prefixes are the schemas' id aliases") {
  auto reg = SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  REQUIRE(reg.ok());
  std::vector<std::string> aliases;
  for (const std::string& kind : (*reg)->kinds()) {
    if (!(*reg)->IdAlias(kind).empty()) aliases.push_back((*reg)->IdAlias(kind));
  }
  CHECK(aliases == PreviewPrefixes());
}

}  // namespace canonical_id_test
