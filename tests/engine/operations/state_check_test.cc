// CheckState and CheckTrackedOnce: a state that plan, apply and destroy can
// rely on, a diagnostic per problem otherwise.
#include "engine/operations/state_check.h"

#include <catch2/catch.hpp>

namespace state_check_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

ResourceState Res(const std::string& address, const std::string& id,
                  std::vector<std::string> deps = {}) {
  ResourceState rs;
  rs.address = address;
  rs.kind = address.substr(0, address.find('.'));
  rs.id = id;
  rs.depends_on = std::move(deps);
  return rs;
}

StateSnapshot State(std::vector<ResourceState> resources) {
  StateSnapshot st;
  st.lineage = "l";
  for (auto& rs : resources) st.resources[rs.address] = std::move(rs);
  return st;
}

StateCheckOptions Options() {
  StateCheckOptions o;
  o.kinds = {{"network", {}}, {"instance", {}}, {"volume", {}}};
  o.kinds["instance"].id_alias = "inst_";
  o.is_id = [](const std::string& id) {
    return !id.empty() && id.find_first_of("/ ?") == std::string::npos;
  };
  return o;
}

std::string Codes(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) out += d.code + " ";
  return out;
}

}  // namespace

TEST_CASE("a state Cairn writes passes, deposed objects and dependencies included") {
  auto st = State({Res("network.core", "n1"), Res("instance.web[0]", "uuid-1", {"network.core"}),
                   Res("instance.web[1]", "uuid-2", {"network.core", "instance.web[0]"}),
                   Res("instance.web[0] (deposed)", "uuid-0", {"network.core"})});
  CHECK(CheckState(st, Options()).empty());
  CHECK(CheckState({}, Options()).empty());
}

TEST_CASE("every problem of a state is its own diagnostic, at the resource") {
  auto st = State({Res("network.a", "n-a", {"network.b"}), Res("network.b", "n-b", {"network.c"}),
                   Res("network.c", "n-c", {"network.a"}),
                   Res("instance.x", "../../networks", {"volume.gone"}),
                   Res("instance.self", "i-s", {"instance.self"}), Res("bucket.b", "b1"),
                   Res("instance.web[00]", "i-w")});
  StateCheckOptions o = Options();
  o.locations["instance.x"] = {"backup.json", 12, 18, 12};
  auto diags = CheckState(st, o);
  INFO(Codes(diags));
  REQUIRE(diags.size() == 6);
  std::map<std::string, std::vector<std::string>> by_code;
  for (const auto& d : diags) by_code[d.code].push_back(d.summary);
  CHECK(by_code["dependency_cycle"] ==
        std::vector<std::string>{"depends_on entries form a cycle: instance.self -> instance.self",
                                 "depends_on entries form a cycle: network.a -> network.b -> "
                                 "network.c -> network.a"});
  CHECK(by_code["invalid_id"] ==
        std::vector<std::string>{"instance.x: \"../../networks\" is not an id"});
  CHECK(by_code["unknown_depends_on"] ==
        std::vector<std::string>{
            "instance.x depends on volume.gone, which the state does not record"});
  CHECK(by_code["unknown_kind"] ==
        std::vector<std::string>{"bucket.b is of kind bucket, which this Cairn does not know"});
  CHECK(by_code["invalid_state_address"] ==
        std::vector<std::string>{"\"instance.web[00]\" is not a resource address"});
  // Located where the caller knows the address is written.
  for (const auto& d : diags) {
    if (d.code == "invalid_id") CHECK(d.location.line == 12);
  }
}

TEST_CASE("one remote object at two addresses is refused, naming the first, ids canonical") {
  auto st = State({Res("volume.vols[\"a\"]", "v1"), Res("volume.vols[\"b\"]", "v1"),
                   Res("instance.api", "01234567-89ab-cdef-0123-456789abcd07"),
                   Res("instance.web", "inst_0123456789abcdef0123456789abcd07")});
  auto diags = CheckState(st, Options());
  REQUIRE(diags.size() == 2);
  CHECK(diags[0].code == "duplicate_id");
  CHECK(diags[0].summary ==
        "instance.web: instance inst_0123456789abcdef0123456789abcd07 is tracked at instance.api "
        "already (as "
        "01234567-89ab-cdef-0123-456789abcd07)");
  CHECK(diags[1].summary ==
        "volume.vols[\"b\"]: volume v1 is tracked at volume.vols[\"a\"] already");
  CHECK(diags[1].detail.find("'cairn state mv volume.vols[\"a\"] volume.vols[\"b\"]'") !=
        std::string::npos);

  // Only the addresses given count; among them, the one that held it first is named.
  auto one = CheckTrackedOnce(st, {"volume.vols[\"b\"]"}, Options());
  REQUIRE(one.size() == 1);
  CHECK(one[0].summary.find("tracked at volume.vols[\"a\"]") != std::string::npos);
  auto both = CheckTrackedOnce(st, {"volume.vols[\"a\"]", "volume.vols[\"b\"]"}, Options());
  REQUIRE(both.size() == 1);
  CHECK(both[0].summary.rfind("volume.vols[\"b\"]:", 0) == 0);
  CHECK(CheckTrackedOnce(st, {"network.none"}, Options()).empty());
}

}  // namespace state_check_test
