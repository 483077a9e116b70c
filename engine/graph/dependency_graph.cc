#include "engine/graph/dependency_graph.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>
#include <queue>
#include <set>
#include <utility>

#include "engine/graph/topological_order.h"

namespace cairn {

using BoostGraph = boost::adjacency_list<boost::setS, boost::vecS, boost::bidirectionalS>;

struct DependencyGraph::Impl {
  BoostGraph graph;
  std::vector<ResourceAddress> addresses;
  std::vector<std::string> texts;
  std::map<std::pair<size_t, size_t>, SourceLocation> why;
  // rank[node]: position of the node's address text in sorted order.
  mutable std::vector<size_t> rank;
  mutable bool rank_valid = false;

  const std::vector<size_t>& Ranks() const {
    if (!rank_valid) {
      std::vector<size_t> ids(addresses.size());
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
      std::sort(ids.begin(), ids.end(),
                [&](size_t a, size_t b) { return addresses[a] < addresses[b]; });
      rank.assign(ids.size(), 0);
      for (size_t i = 0; i < ids.size(); ++i) rank[ids[i]] = i;
      rank_valid = true;
    }
    return rank;
  }
};

std::string DependencyCycle::ToString() const {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i) out += " -> ";
    out += path[i].ToString();
  }
  return out;
}

DependencyGraph::DependencyGraph() : impl_(std::make_unique<Impl>()) {}
DependencyGraph::~DependencyGraph() = default;
DependencyGraph::DependencyGraph(DependencyGraph&&) noexcept = default;
DependencyGraph& DependencyGraph::operator=(DependencyGraph&&) noexcept = default;

size_t DependencyGraph::AddNode(const ResourceAddress& address) {
  size_t id = boost::add_vertex(impl_->graph);
  impl_->addresses.push_back(address);
  impl_->texts.push_back(address.ToString());
  impl_->rank_valid = false;
  return id;
}

void DependencyGraph::AddEdge(size_t from, size_t to, const SourceLocation& why) {
  boost::add_edge(from, to, impl_->graph);
  impl_->why.emplace(std::make_pair(from, to), why);
}

size_t DependencyGraph::size() const { return impl_->addresses.size(); }

const ResourceAddress& DependencyGraph::address(size_t node) const {
  return impl_->addresses[node];
}

std::vector<size_t> DependencyGraph::Dependencies(size_t node) const {
  std::vector<size_t> out;
  for (auto [it, end] = boost::out_edges(node, impl_->graph); it != end; ++it) {
    out.push_back(boost::target(*it, impl_->graph));
  }
  const auto& addresses = impl_->addresses;
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return addresses[a] < addresses[b]; });
  return out;
}

std::vector<size_t> DependencyGraph::TopologicalOrder() const {
  const auto& g = impl_->graph;
  // A depends on B: B comes before A.
  std::vector<std::pair<size_t, size_t>> before;
  before.reserve(boost::num_edges(g));
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    before.emplace_back(boost::target(*it, g), boost::source(*it, g));
  }
  return SortTopologically(size(), before, impl_->Ranks()).order;
}

std::vector<DependencyCycle> DependencyGraph::FindCycles() const {
  const auto& g = impl_->graph;
  const size_t n = size();
  std::vector<DependencyCycle> out;
  if (n == 0) return out;
  std::vector<int> component(n);
  int count = boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  std::vector<std::vector<size_t>> members(count);
  for (size_t v = 0; v < n; ++v) members[component[v]].push_back(v);
  const auto& texts = impl_->texts;
  for (const auto& m : members) {
    size_t start = *std::min_element(m.begin(), m.end(),
                                     [&](size_t a, size_t b) { return texts[a] < texts[b]; });
    bool self_loop = boost::edge(start, start, g).second;
    if (m.size() < 2 && !self_loop) continue;
    DependencyCycle cycle;
    if (self_loop) {
      cycle.path = {impl_->addresses[start], impl_->addresses[start]};
      cycle.location = impl_->why.at({start, start});
      out.push_back(std::move(cycle));
      continue;
    }
    // Shortest path start -> ... -> start inside the component (BFS, the
    // smallest address first among neighbours, so the path is deterministic).
    const int comp = component[start];
    std::vector<size_t> parent(n, n);
    std::vector<bool> seen(n, false);
    std::queue<size_t> queue;
    queue.push(start);
    seen[start] = true;
    size_t last = n;
    while (!queue.empty() && last == n) {
      size_t v = queue.front();
      queue.pop();
      for (size_t w : Dependencies(v)) {
        if (component[w] != comp) continue;
        if (w == start) {
          last = v;
          break;
        }
        if (!seen[w]) {
          seen[w] = true;
          parent[w] = v;
          queue.push(w);
        }
      }
    }
    std::vector<size_t> rev;
    for (size_t v = last; v != n && v != start; v = parent[v]) rev.push_back(v);
    cycle.path.push_back(impl_->addresses[start]);
    for (auto it = rev.rbegin(); it != rev.rend(); ++it)
      cycle.path.push_back(impl_->addresses[*it]);
    cycle.path.push_back(impl_->addresses[start]);
    size_t second = rev.empty() ? start : rev.back();
    cycle.location = impl_->why.at({start, second});
    out.push_back(std::move(cycle));
  }
  std::sort(out.begin(), out.end(), [](const DependencyCycle& a, const DependencyCycle& b) {
    return a.path.front().ToString() < b.path.front().ToString();
  });
  return out;
}

}  // namespace cairn
