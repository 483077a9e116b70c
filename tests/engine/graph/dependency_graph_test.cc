#include "engine/graph/dependency_graph.h"

#include <catch2/catch.hpp>

namespace dependency_graph_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

ResourceAddress A(const std::string& s) { return *ResourceAddress::Parse(s); }

std::vector<std::string> Order(const DependencyGraph& g) {
  std::vector<std::string> out;
  for (size_t i : g.TopologicalOrder()) out.push_back(g.address(i).ToString());
  return out;
}

}  // namespace

TEST_CASE("topological order puts dependencies first and breaks ties by address") {
  DependencyGraph g;
  size_t web = g.AddNode(A("instance.web"));
  size_t vol = g.AddNode(A("volume.data"));
  size_t net = g.AddNode(A("network.backend"));
  size_t key = g.AddNode(A("ssh_key.deploy"));
  size_t fw = g.AddNode(A("firewall.edge"));
  g.AddEdge(web, net);
  g.AddEdge(web, key);
  g.AddEdge(vol, web);
  g.AddEdge(fw, web);
  g.AddEdge(web, net);  // parallel edges merge
  CHECK(Order(g) == std::vector<std::string>{"network.backend", "ssh_key.deploy", "instance.web",
                                             "firewall.edge", "volume.data"});
  CHECK(g.FindCycles().empty());
  auto deps = g.Dependencies(web);
  REQUIRE(deps.size() == 2);
  CHECK(g.address(deps[0]).ToString() == "network.backend");
}

TEST_CASE("the order is independent of insertion order, and counts order as numbers") {
  DependencyGraph a, b;
  std::vector<std::string> names = {"instance.c", "instance.a", "instance.b[10]", "instance.b[2]"};
  for (const auto& n : names) a.AddNode(A(n));
  for (auto it = names.rbegin(); it != names.rend(); ++it) b.AddNode(A(*it));
  CHECK(Order(a) == Order(b));
  CHECK(Order(a) ==
        std::vector<std::string>{"instance.a", "instance.b[2]", "instance.b[10]", "instance.c"});
}

TEST_CASE("a cycle is named in full, starting at its smallest address") {
  DependencyGraph g;
  size_t vol = g.AddNode(A("volume.b"));
  size_t inst = g.AddNode(A("instance.a"));
  size_t net = g.AddNode(A("network.n"));
  SourceLocation where{"a.yaml", 4, 14, 8};
  g.AddEdge(inst, vol, where);
  g.AddEdge(vol, inst, {"a.yaml", 9, 13, 1});
  g.AddEdge(inst, net);
  auto cycles = g.FindCycles();
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0].ToString() == "instance.a -> volume.b -> instance.a");
  CHECK(cycles[0].location.line == 4);
  // Nodes on the cycle are left out of the order; the rest is still ordered.
  CHECK(Order(g) == std::vector<std::string>{"network.n"});
}

TEST_CASE("self-loops and several cycles are each reported once") {
  DependencyGraph g;
  size_t a = g.AddNode(A("instance.a"));
  size_t b = g.AddNode(A("instance.b"));
  size_t c = g.AddNode(A("instance.c"));
  size_t d = g.AddNode(A("instance.d"));
  g.AddEdge(a, a);
  g.AddEdge(b, c);
  g.AddEdge(c, d);
  g.AddEdge(d, b);
  g.AddEdge(c, b);
  auto cycles = g.FindCycles();
  REQUIRE(cycles.size() == 2);
  CHECK(cycles[0].ToString() == "instance.a -> instance.a");
  CHECK(cycles[1].ToString() == "instance.b -> instance.c -> instance.b");
}

}  // namespace dependency_graph_test
