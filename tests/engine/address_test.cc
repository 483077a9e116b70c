#include "engine/address.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "base/value.h"

namespace address_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("addresses round-trip through their canonical text") {
  for (std::string text :
       {"instance.web", "instance.web[2]", "network.core[\"eu-1\"]", "ssh_key.k[\"a\\\"b\"]"}) {
    auto addr = ResourceAddress::Parse(text);
    REQUIRE(addr);
    CHECK(addr->ToString() == text);
  }
  auto a = ResourceAddress::Parse("instance.web[3]");
  CHECK(std::get<int>(a->index) == 3);
  CHECK(a->BaseString() == "instance.web");
}

TEST_CASE("state keys: a deposed object is its resource's address and a deposed flag") {
  auto current = StateKey::Parse("module.app[1].instance.web[\"a\"]");
  REQUIRE(current);
  CHECK_FALSE(current->deposed);
  CHECK(current->resource == *ResourceAddress::Parse("module.app[1].instance.web[\"a\"]"));
  // The text the state has always stored for a deposed object.
  auto deposed = StateKey::Parse("instance.web[2] (deposed)");
  REQUIRE(deposed);
  CHECK(deposed->deposed);
  CHECK(deposed->resource == *ResourceAddress::Parse("instance.web[2]"));
  CHECK(deposed->ToString() == "instance.web[2] (deposed)");
  CHECK(StateKey{*ResourceAddress::Parse("network.core"), true}.ToString() ==
        "network.core (deposed)");
  CHECK(StateKey{*ResourceAddress::Parse("network.core"), false}.ToString() == "network.core");
  for (std::string text : {"instance.web (deposed) (deposed)", " (deposed)",
                           "instance.web(deposed)", "instance.web  (deposed)"}) {
    CHECK_FALSE(StateKey::Parse(text));
  }
}

TEST_CASE("malformed addresses do not parse") {
  for (std::string text : {"instance", ".web", "instance.", "instance.web[", "instance.web[-1]",
                           "instance.web[x]", "1nstance.web", "instance.we b"}) {
    CHECK_FALSE(ResourceAddress::Parse(text));
  }
}

TEST_CASE("unknown values are detected when nested") {
  Value v = {{"a", 1}, {"b", Value::array({1, UnknownValue()})}};
  CHECK(ContainsUnknown(v));
  CHECK_FALSE(IsUnknown(v));
  CHECK(IsUnknown(v["b"][1]));
  CHECK_FALSE(ContainsUnknown(Value{{"a", 1}}));
}

TEST_CASE("addresses order naturally: counts as numbers, no index first") {
  auto a = [](const char* s) { return *ResourceAddress::Parse(s); };
  CHECK(a("instance.web[2]") < a("instance.web[10]"));
  CHECK_FALSE(a("instance.web[10]") < a("instance.web[2]"));
  CHECK(a("instance.web") < a("instance.web[0]"));
  CHECK(a("instance.web[9]") < a("instance.web[\"a\"]"));
  CHECK(a("instance.web[\"b\"]") < a("instance.webs"));
  CHECK(a("instance.z") < a("network.a"));
  std::vector<std::string> texts = {"instance.web[10]", "instance.web[2]", "not an address",
                                    "instance.web[1]"};
  std::sort(texts.begin(), texts.end(), AddressTextLess);
  CHECK(texts == std::vector<std::string>{"instance.web[1]", "instance.web[2]", "instance.web[10]",
                                          "not an address"});
}

TEST_CASE("addresses inside modules round-trip, and malformed module paths do not parse") {
  for (const char* text : {"module.app.instance.web", "module.app[0].network.main",
                           "module.app[\"eu\"].module.db.volume.data[2]",
                           "module.a.module.b.instance.x[\"k\\\"q\"]"}) {
    auto a = ResourceAddress::Parse(text);
    INFO(text);
    REQUIRE(a);
    CHECK(a->ToString() == text);
  }
  auto a = *ResourceAddress::Parse("module.app[1].module.db.instance.web[2]");
  REQUIRE(a.module.size() == 2);
  CHECK(a.module[0].name == "app");
  CHECK(std::get<int>(a.module[0].index) == 1);
  CHECK(a.kind == "instance");
  CHECK(a.BaseString() == "module.app[1].module.db.instance.web");
  for (const char* bad :
       {"module.app", "module.app.instance", "module..instance.web", "module.app[x].instance.web",
        "module.app[0]instance.web", "module.app[\"k].instance.web", "instance.web.extra"}) {
    INFO(bad);
    CHECK_FALSE(ResourceAddress::Parse(bad));
  }
  // A module path alone (what --target module.NAME takes).
  REQUIRE(ParseModulePath("module.app[1].module.db"));
  CHECK(ParseModulePath("module.app[1].module.db")->size() == 2);
  for (const char* bad : {"module.app.", "module.", "module.app.instance.web", "app"}) {
    INFO(bad);
    CHECK_FALSE(ParseModulePath(bad));
  }
}

TEST_CASE("the stack's resources order before modules, modules by name and natural index") {
  std::vector<std::string> texts = {"module.b.network.n", "module.a[10].network.n", "network.z",
                                    "module.a[2].network.n", "module.a.network.n"};
  std::sort(texts.begin(), texts.end(), AddressTextLess);
  CHECK(texts == std::vector<std::string>{"network.z", "module.a.network.n",
                                          "module.a[2].network.n", "module.a[10].network.n",
                                          "module.b.network.n"});
}

}  // namespace address_test
