// --target and --exclude patterns (engine/address_pattern.h).
#include "engine/address_pattern.h"

#include <catch2/catch.hpp>

namespace address_pattern_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

bool Match(const std::string& pattern, const std::string& address) {
  auto p = AddressPattern::Parse(pattern);
  REQUIRE(p);
  auto a = ResourceAddress::Parse(address);
  REQUIRE(a);
  return p->Matches(*a);
}

}  // namespace

TEST_CASE("address patterns: an address names its instances, a module path what is inside") {
  CHECK(Match("instance.web", "instance.web"));
  CHECK(Match("instance.web", "instance.web[2]"));
  CHECK(Match("instance.web", "instance.web[\"eu\"]"));
  CHECK_FALSE(Match("instance.web", "instance.webx"));
  CHECK_FALSE(Match("instance.web", "module.a.instance.web"));
  CHECK(Match("instance.web[1]", "instance.web[1]"));
  CHECK_FALSE(Match("instance.web[1]", "instance.web[12]"));
  CHECK_FALSE(Match("instance.web[1]", "instance.web"));
  CHECK(Match("module.app", "module.app.network.main"));
  CHECK(Match("module.app", "module.app[3].network.main"));
  CHECK(Match("module.app", "module.app[\"eu\"].module.db.volume.data[0]"));
  CHECK_FALSE(Match("module.app", "module.apple.network.main"));
  CHECK_FALSE(Match("module.app[0]", "module.app[1].network.main"));
  CHECK(Match("module.app[0].module.db", "module.app[0].module.db.volume.data"));
  CHECK(AddressPattern::Parse("module.app")->is_module());
  CHECK_FALSE(AddressPattern::Parse("network.main")->is_module());
}

TEST_CASE("address patterns: [*] is any instance, or none") {
  CHECK(Match("instance.web[*]", "instance.web[0]"));
  CHECK(Match("instance.web[*]", "instance.web[\"a]b\"]"));
  CHECK(Match("instance.web[*]", "instance.web"));
  CHECK_FALSE(Match("instance.web[*]", "instance.api[0]"));
  CHECK(Match("module.app[*].network.main", "module.app[0].network.main"));
  CHECK(Match("module.app[*].network.main", "module.app[\"eu\"].network.main"));
  CHECK(Match("module.app[*].network.main", "module.app.network.main"));
  CHECK_FALSE(Match("module.app[*].network.main", "module.app[0].network.other"));
  CHECK_FALSE(Match("module.app[*].network.main", "module.app[0].module.x.network.main"));
  CHECK(Match("module.app[*].instance.web[*]", "module.app[1].instance.web[\"x\"]"));
  CHECK(Match("module.app[*]", "module.app[2].module.db.volume.v"));
}

TEST_CASE("address patterns: what is not an address or a module path is refused") {
  for (const char* bad :
       {"", "web", "instance.", "instance.web[", "instance.web[x]", "instance.web[*",
        "instance.web[**]", "module.", "instance web", "instance.web[ 1 ]", "*"}) {
    INFO(bad);
    CHECK_FALSE(AddressPattern::Parse(bad));
  }
}

}  // namespace address_pattern_test
