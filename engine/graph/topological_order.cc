#include "engine/graph/topological_order.h"

#include <functional>
#include <queue>

namespace cairn {

TopologicalOrder SortTopologically(size_t nodes, std::span<const std::pair<size_t, size_t>> before,
                                   std::span<const size_t> rank) {
  // Successors as one array sliced per node (first[v] .. first[v + 1]).
  std::vector<size_t> first(nodes + 1, 0), predecessors(nodes, 0);
  for (const auto& [a, b] : before) {
    ++first[a + 1];
    ++predecessors[b];
  }
  for (size_t v = 0; v < nodes; ++v) first[v + 1] += first[v];
  std::vector<size_t> successors(before.size());
  std::vector<size_t> fill(first.begin(), first.end() - 1);
  for (const auto& [a, b] : before) successors[fill[a]++] = b;

  auto rank_of = [&](size_t v) { return rank.empty() ? v : rank[v]; };
  // Min-heap of (rank, id) over the nodes whose predecessors are all placed.
  std::priority_queue<std::pair<size_t, size_t>, std::vector<std::pair<size_t, size_t>>,
                      std::greater<>>
      ready;
  for (size_t v = 0; v < nodes; ++v) {
    if (predecessors[v] == 0) ready.emplace(rank_of(v), v);
  }
  TopologicalOrder out;
  out.order.reserve(nodes);
  while (!ready.empty()) {
    size_t v = ready.top().second;
    ready.pop();
    out.order.push_back(v);
    for (size_t i = first[v]; i < first[v + 1]; ++i) {
      size_t s = successors[i];
      if (--predecessors[s] == 0) ready.emplace(rank_of(s), s);
    }
  }
  for (size_t v = 0; v < nodes; ++v) {
    if (predecessors[v] != 0) out.unplaced.push_back(v);
  }
  return out;
}

}  // namespace cairn
