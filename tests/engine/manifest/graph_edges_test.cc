// The graph stages alone: declared resources and what was written
// (depends_on, replace_triggered_by, references) in, edges and diagnostics
// out; then resources and edges in, the ordered resources and cycles out.
#include "engine/manifest/graph_edges.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"

namespace graph_edges_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

SourceLocation At(int line) { return {"s.yaml", line, 3, 1}; }

// 0 network.main; 1, 2 instance.web[0], [1] (count 2); 3 instance.db["a"].
struct Stack {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  std::vector<ResourceConfig> resources;
  std::map<std::string, ResourceGroup> groups;

  Stack() {
    Add("network", "main", ResourceGroup::Mode::kSingle, {std::monostate{}});
    Add("instance", "web", ResourceGroup::Mode::kCount, {0, 1});
    Add("instance", "db", ResourceGroup::Mode::kForEach, {std::string("a")});
  }

  void Add(const std::string& kind, const std::string& name, ResourceGroup::Mode mode,
           std::vector<AddressIndex> indexes) {
    ResourceGroup g{kind, name, {}, 0, mode, {}};
    for (const auto& index : indexes) {
      ResourceConfig rc;
      rc.address = {kind, name, index, {}};
      rc.kind = kind;
      rc.spec = {{"name", name}};
      g.instances.push_back(resources.size());
      resources.push_back(std::move(rc));
    }
    groups.emplace(kind + "." + name, std::move(g));
  }

  DeclaredResources declared() const { return {resources, groups, *registry}; }
};

ResourceAddress Addr(const std::string& text) {
  auto a = ResourceAddress::Parse(text);
  REQUIRE(a);
  return *a;
}

// The one reference `text` ("${...}") makes, written at `pointer` of
// resource `from` (-1: an output), at line `line`; `exact` when it is the
// whole string.
WrittenReference Ref(const std::string& text, int from, int line, bool exact = true,
                     const std::string& pointer = "/network") {
  expr::NodePtr n = ParseExpressionForm(text);
  REQUIRE(n);
  auto refs = ReferencesIn(*n);
  REQUIRE(refs.size() == 1);
  WrittenReference w;
  w.expr = refs[0];
  w.resource = from;
  w.pointer = pointer;
  w.exact = exact;
  w.location = At(line);
  return w;
}

std::vector<std::pair<size_t, size_t>> Pairs(const std::vector<Edge>& edges) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& e : edges) out.emplace_back(e.from, e.to);
  return out;
}

using PairList = std::vector<std::pair<size_t, size_t>>;

}  // namespace

TEST_CASE("graph_edges: depends_on makes every instance depend on every instance named") {
  Stack s;
  DependsOn deps;
  deps["instance.web"] = {{Addr("network.main"), At(4)}, {Addr("instance.db"), At(5)}};
  deps["instance.gone"] = {{Addr("network.main"), At(9)}};  // not declared: nothing
  EdgesResult r = ResolveDependsOn(s.declared(), deps);
  CHECK(r.diagnostics.empty());
  CHECK(Pairs(r.edges) == PairList{{1, 0}, {2, 0}, {1, 3}, {2, 3}});
  CHECK(r.edges[0].why.line == 4);
  CHECK(r.edges[2].why.line == 5);
}

TEST_CASE("graph_edges: depends_on naming nothing is unknown_depends_on, with a hint") {
  Stack s;
  DependsOn deps;
  deps["instance.db"] = {{Addr("network.mian"), At(6)},
                         {Addr("netwrk.main"), At(7)},
                         {Addr("instance.web[5]"), At(8)}};
  EdgesResult r = ResolveDependsOn(s.declared(), deps);
  CHECK(r.edges.empty());
  REQUIRE(r.diagnostics.size() == 3);
  for (const auto& d : r.diagnostics) CHECK(d.code == "unknown_depends_on");
  CHECK(r.diagnostics[0].summary == "depends_on names undeclared resource network.mian");
  CHECK(r.diagnostics[0].detail == "did you mean \"main\"?");
  CHECK(r.diagnostics[0].location.line == 6);
  CHECK(r.diagnostics[1].detail == "did you mean \"network\"?");
  CHECK(r.diagnostics[1].location.line == 7);
  CHECK(r.diagnostics[2].summary.rfind("depends_on: ", 0) == 0);  // an index out of range
  CHECK(r.diagnostics[2].location.line == 8);
}

TEST_CASE("graph_edges: replace_triggered_by makes edges and refuses what it cannot name") {
  Stack s;
  auto& triggers = s.resources[1].lifecycle.replace_triggered_by;
  triggers.push_back({Addr("network.main"), true, "", At(10)});
  triggers.push_back({Addr("instance.web"), true, "", At(11)});  // itself among them
  triggers.push_back({Addr("network.main"), true, "colour", At(12)});
  triggers.push_back({Addr("volume.data"), true, "", At(13)});
  triggers.push_back({Addr("instance.db[\"a\"]"), false, "id", At(14)});
  EdgesResult r = ResolveTriggers(s.declared());
  CHECK(Pairs(r.edges) == PairList{{1, 0}, {1, 2}, {1, 3}});
  CHECK(r.edges[1].why.line == 11);
  REQUIRE(r.diagnostics.size() == 3);
  CHECK(r.diagnostics[0].code == "unknown_replace_trigger");
  CHECK(r.diagnostics[0].summary == "instance.web[0] cannot be replaced because of itself");
  CHECK(r.diagnostics[0].location.line == 11);
  CHECK(r.diagnostics[1].code == "unknown_attribute");
  CHECK(r.diagnostics[1].summary == "network has no attribute \"colour\"");
  CHECK(r.diagnostics[1].location.line == 12);
  CHECK(r.diagnostics[2].code == "unknown_replace_trigger");
  CHECK(r.diagnostics[2].summary == "replace_triggered_by names undeclared resource volume.data");
  CHECK(r.diagnostics[2].location.line == 13);
}

TEST_CASE("graph_edges: a resolved reference is an edge from the resource it is written in") {
  Stack s;
  std::vector<WrittenReference> uses;
  uses.push_back(Ref("${network.main.id}", 1, 20));
  uses.push_back(Ref("${instance.web[*].id}", 3, 21, false, "/tags"));
  uses.push_back(Ref("${network.main.id}", -1, 22));  // an output: no edge
  WrittenReference only_checked = Ref("${network.main.id}", 2, 23);
  only_checked.check_only = true;  // joins the graph where the module uses it
  uses.push_back(only_checked);
  EdgesResult r = ReferenceEdges(uses, s.declared(), {});
  CHECK(r.diagnostics.empty());
  CHECK(Pairs(r.edges) == PairList{{1, 0}, {3, 1}, {3, 2}});
  CHECK(r.edges[0].why.line == 20);
  CHECK(r.edges[2].why.line == 21);
}

TEST_CASE("graph_edges: a reference that resolves to nothing is reported, unless derived") {
  Stack s;
  std::vector<WrittenReference> uses;
  uses.push_back(Ref("${network.mian.id}", 1, 30));
  WrittenReference derived = Ref("${network.mian.id}", 2, 31);
  derived.derived = true;
  uses.push_back(derived);
  EdgesResult r = ReferenceEdges(uses, s.declared(), {});
  CHECK(r.edges.empty());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "unknown_reference");
  CHECK(r.diagnostics[0].location.line == 30);
}

TEST_CASE("graph_edges: a data source reference makes no edge and is checked") {
  Stack s;
  std::set<std::string> data = {"data.network.shared"};
  std::vector<WrittenReference> uses;
  uses.push_back(Ref("${data.network.shared.id}", 1, 40));      // fine
  uses.push_back(Ref("${data.network.sharde.id}", 1, 41));      // undeclared
  uses.push_back(Ref("${data.network.shared.colour}", 1, 42));  // no such attribute
  uses.push_back(Ref("${data.netwrk.shared.id}", 1, 43));       // no such kind
  uses.push_back(Ref("${data.volume.shared.id}", 1, 44));       // undeclared too
  WrittenReference derived = Ref("${data.network.other.id}", 1, 45);
  derived.derived = true;
  uses.push_back(derived);
  EdgesResult r = ReferenceEdges(uses, s.declared(), data);
  CHECK(r.edges.empty());
  REQUIRE(r.diagnostics.size() == 4);
  CHECK(r.diagnostics[0].code == "unknown_reference");
  CHECK(r.diagnostics[0].summary == "reference to undeclared data source data.network.sharde");
  CHECK(r.diagnostics[0].detail == "did you mean \"shared\"?");
  CHECK(r.diagnostics[0].location.line == 41);
  CHECK(r.diagnostics[1].code == "unknown_attribute");
  CHECK(r.diagnostics[1].location.line == 42);
  CHECK(r.diagnostics[2].code == "unknown_reference");
  CHECK(r.diagnostics[2].summary.find("unknown kind \"netwrk\"") != std::string::npos);
  CHECK(r.diagnostics[2].location.line == 43);
  CHECK(r.diagnostics[3].code == "unknown_reference");
  CHECK(r.diagnostics[3].location.line == 44);
}

TEST_CASE("graph_edges: a data source of the wrong kind in a reference field") {
  Stack s;
  std::set<std::string> data = {"data.volume.v"};
  std::vector<WrittenReference> uses = {Ref("${data.volume.v.id}", 1, 50)};
  EdgesResult r = ReferenceEdges(uses, s.declared(), data);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "reference_kind_mismatch");
  CHECK(r.diagnostics[0].summary == "field \"network\" must refer to network, not to volume");
  CHECK(r.diagnostics[0].location.line == 50);
}

TEST_CASE("graph_edges: the graph orders dependencies first and fills depends_on") {
  Stack s;
  std::vector<Edge> edges = {{1, 0, At(60)}, {3, 1, At(61)}, {3, 2, At(62)}};
  Graph g = BuildGraph(s.resources, edges);
  CHECK(g.diagnostics.empty());
  REQUIRE(g.resources.size() == 4);
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < g.resources.size(); ++i) pos[g.resources[i].address.ToString()] = i;
  CHECK(pos["network.main"] < pos["instance.web[0]"]);
  CHECK(pos["instance.web[0]"] < pos["instance.db[\"a\"]"]);
  CHECK(pos["instance.web[1]"] < pos["instance.db[\"a\"]"]);
  for (const auto& [address, i] : pos) CHECK(g.index.at(address) == i);
  const ResourceConfig& db = g.resources[pos["instance.db[\"a\"]"]];
  CHECK(db.depends_on.size() == 2);
  CHECK(g.resources[pos["network.main"]].depends_on.empty());
  CHECK(g.resources[pos["instance.web[0]"]].depends_on.at(0).ToString() == "network.main");
}

TEST_CASE("graph_edges: a cycle is dependency_cycle, its resources last by address") {
  Stack s;
  std::vector<Edge> edges = {{2, 1, At(70)}, {1, 2, At(71)}, {1, 0, At(72)}};
  Graph g = BuildGraph(s.resources, edges);
  REQUIRE(g.diagnostics.size() == 1);
  CHECK(g.diagnostics[0].code == "dependency_cycle");
  CHECK(g.diagnostics[0].summary.find("instance.web[0]") != std::string::npos);
  CHECK(g.diagnostics[0].summary.find("instance.web[1]") != std::string::npos);
  CHECK((g.diagnostics[0].location.line == 70 || g.diagnostics[0].location.line == 71));
  REQUIRE(g.resources.size() == 4);
  CHECK(g.resources[2].address.ToString() == "instance.web[0]");
  CHECK(g.resources[3].address.ToString() == "instance.web[1]");
}

}  // namespace graph_edges_test
