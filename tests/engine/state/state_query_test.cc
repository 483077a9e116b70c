#include "engine/state/state_query.h"

#include <catch2/catch.hpp>

namespace state_query_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

StateSnapshot StateOf(const std::vector<std::string>& addresses) {
  StateSnapshot st;
  for (const auto& a : addresses) st.resources[a].address = a;
  return st;
}

}  // namespace

TEST_CASE("an address names itself, or every recorded instance of its resource") {
  StateSnapshot st = StateOf({"instance.node[\"b\"]", "instance.node[\"a\"]", "instance.web[10]",
                              "instance.web[2]", "instance.web[2] (deposed)", "network.core",
                              "module.app[0].instance.node[\"a\"]"});
  using V = std::vector<std::string>;
  CHECK(StateAddressesNamed(st, "network.core") == V{"network.core"});
  CHECK(StateAddressesNamed(st, "instance.web[02]") == V{"instance.web[2]"});
  CHECK(StateAddressesNamed(st, "instance.node") ==
        V{"instance.node[\"a\"]", "instance.node[\"b\"]"});
  CHECK(StateAddressesNamed(st, "instance.web") ==
        V{"instance.web[2]", "instance.web[10]", "instance.web[2] (deposed)"});
  CHECK(StateAddressesNamed(st, "module.app[0].instance.node") ==
        V{"module.app[0].instance.node[\"a\"]"});
  // An instance that is not recorded, another resource, or no address at all.
  CHECK(StateAddressesNamed(st, "instance.web[3]").empty());
  CHECK(StateAddressesNamed(st, "instance.nod").empty());
  CHECK(StateAddressesNamed(st, "not an address").empty());
}

}  // namespace state_query_test
