// DependencyGraph: resource instances and the "depends on" relation between
// them (from references and `depends_on`), over Boost.Graph.
//
// Invariants: node ids are dense, in insertion order; an edge A -> B means A
// depends on B (B must exist before A); parallel edges are merged, keeping
// the location of the first. TopologicalOrder() is the engine's one order
// (engine/graph/topological_order.h), deterministic: among the nodes whose
// dependencies are all done, the smallest address comes first. Nodes on or
// behind a cycle are not in the order; FindCycles() names every cycle in
// full, once per strongly connected component.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/address.h"

namespace cairn {

struct DependencyCycle {
  // First and last elements are equal: a -> b -> a.
  std::vector<ResourceAddress> path;
  // Where the first step of the path (path[0] depends on path[1]) is written.
  SourceLocation location;

  // "instance.a -> volume.b -> instance.a"
  std::string ToString() const;
};

class DependencyGraph {
 public:
  DependencyGraph();
  ~DependencyGraph();
  DependencyGraph(DependencyGraph&&) noexcept;
  DependencyGraph& operator=(DependencyGraph&&) noexcept;

  size_t AddNode(const ResourceAddress& address);
  // `from` depends on `to`; `why` is where the reference is written.
  void AddEdge(size_t from, size_t to, const SourceLocation& why = {});

  size_t size() const;
  const ResourceAddress& address(size_t node) const;
  // What `node` depends on, sorted by address text.
  std::vector<size_t> Dependencies(size_t node) const;

  // Dependencies first, ties broken by address text.
  std::vector<size_t> TopologicalOrder() const;
  // Sorted by the first address of each path.
  std::vector<DependencyCycle> FindCycles() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn
