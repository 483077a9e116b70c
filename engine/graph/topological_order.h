// TopologicalOrder: the engine's one topological sort, over nodes named by
// dense ids (0..n-1) and "comes before" edges. The loader's DependencyGraph,
// the plan's deletes and the apply's graph all take their order (or their
// proof of having none to break) from it.
//
// Invariants: the order is deterministic. Among the nodes whose
// predecessors are all placed, the one of smallest rank comes first (equal
// ranks, or no ranks at all, by id). A node on a cycle, or after one, is
// never placed: it is returned apart (`unplaced`), so that the caller can
// name the cycle, or fall back where its input cannot hold one. Parallel
// edges are allowed; a self-edge is a cycle. Linear in nodes and edges (plus
// the log of the nodes ready at once).
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace cairn {

struct TopologicalOrder {
  std::vector<size_t> order;     // the nodes placed, each after all its predecessors
  std::vector<size_t> unplaced;  // on a cycle or after one, by ascending id
  bool acyclic() const { return unplaced.empty(); }
};

// `before`: edges {a, b}, node a comes before node b. `rank`: empty, or one
// per node (ties among ready nodes go to the smallest).
TopologicalOrder SortTopologically(size_t nodes, std::span<const std::pair<size_t, size_t>> before,
                                   std::span<const size_t> rank = {});

// rank[i]: the position of node i once the nodes are sorted by `less` (a
// strict weak order over ids; equivalent nodes by id), for SortTopologically.
template <typename Less>
std::vector<size_t> RanksBy(size_t nodes, Less less) {
  std::vector<size_t> ids(nodes);
  std::iota(ids.begin(), ids.end(), size_t{0});
  std::stable_sort(ids.begin(), ids.end(), less);
  std::vector<size_t> rank(nodes);
  for (size_t i = 0; i < nodes; ++i) rank[ids[i]] = i;
  return rank;
}

}  // namespace cairn
