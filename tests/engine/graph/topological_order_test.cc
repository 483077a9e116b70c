#include "engine/graph/topological_order.h"

#include <catch2/catch.hpp>
#include <string>

#include "engine/address.h"

namespace topological_order_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

using Edges = std::vector<std::pair<size_t, size_t>>;

// The addresses of `order`, named by `names`.
std::vector<std::string> Named(const std::vector<size_t>& order,
                               const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (size_t i : order) out.push_back(names[i]);
  return out;
}

}  // namespace

TEST_CASE("a topological order places every node after its predecessors, ties by rank") {
  // 0 network, 1 key, 2 instance (after both), 3 volume and 4 firewall (after the instance).
  std::vector<std::string> names = {"network.core", "ssh_key.deploy", "instance.web", "volume.data",
                                    "firewall.edge"};
  Edges before = {{0, 2}, {1, 2}, {2, 3}, {2, 4}, {0, 2}};  // a parallel edge counts once
  auto rank = RanksBy(names.size(),
                      [&](size_t a, size_t b) { return AddressTextLess(names[a], names[b]); });
  TopologicalOrder t = SortTopologically(names.size(), before, rank);
  CHECK(t.acyclic());
  CHECK(Named(t.order, names) == std::vector<std::string>{"network.core", "ssh_key.deploy",
                                                          "instance.web", "firewall.edge",
                                                          "volume.data"});
  // Without ranks, ties go by id.
  CHECK(SortTopologically(names.size(), before).order == std::vector<size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("ties broken by address put web[2] before web[10], whatever the ids") {
  std::vector<std::string> names = {"instance.web[10]", "instance.b", "instance.web[2]",
                                    "instance.a"};
  auto rank = RanksBy(names.size(),
                      [&](size_t a, size_t b) { return AddressTextLess(names[a], names[b]); });
  CHECK(rank == std::vector<size_t>{3, 1, 2, 0});
  CHECK(
      Named(SortTopologically(names.size(), {}, rank).order, names) ==
      std::vector<std::string>{"instance.a", "instance.b", "instance.web[2]", "instance.web[10]"});
  // Equivalent nodes keep their ids' order.
  CHECK(RanksBy(3, [](size_t, size_t) { return false; }) == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("nodes on a cycle, or after one, are reported and never placed") {
  // 0 -> 1 -> 2 -> 1 (a cycle of 1 and 2), 2 -> 3 (after it), 4 alone.
  Edges before = {{0, 1}, {1, 2}, {2, 1}, {2, 3}};
  TopologicalOrder t = SortTopologically(5, before);
  CHECK_FALSE(t.acyclic());
  CHECK(t.order == std::vector<size_t>{0, 4});
  CHECK(t.unplaced == std::vector<size_t>{1, 2, 3});

  // A self-edge is a cycle of one.
  Edges self = {{0, 0}, {1, 0}};
  TopologicalOrder s = SortTopologically(2, self);
  CHECK(s.order == std::vector<size_t>{1});
  CHECK(s.unplaced == std::vector<size_t>{0});

  CHECK(SortTopologically(0, {}).acyclic());
  CHECK(SortTopologically(0, {}).order.empty());
}

}  // namespace topological_order_test
