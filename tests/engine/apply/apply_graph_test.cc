// ApplyGraph alone: which operations a plan makes, and their order; the
// journal's entries as independent, journaled nodes.
#include "engine/apply/apply_graph.h"

#include <catch2/catch.hpp>

namespace apply_graph_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

PlannedChange Change(const std::string& address, Action action,
                     std::vector<std::string> depends_on = {},
                     std::vector<std::string> prior_depends_on = {}) {
  PlannedChange c;
  c.address = address;
  c.kind = address.substr(0, address.find('.'));
  c.action = action;
  c.depends_on = std::move(depends_on);
  c.prior_depends_on = std::move(prior_depends_on);
  return c;
}

// "create network.a", "delete instance.b (deposed)"...
std::string Name(const ApplyNode& n) {
  return std::string(ActionName(n.op)) + " " + n.change->address + (n.deposed ? " (deposed)" : "");
}

size_t Find(const ApplyGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (Name(g.nodes[i]) == name) return i;
  }
  FAIL("no node " << name);
  return 0;
}

// Whether `from` must come before `to`: an edge, or a path of them.
bool Before(const ApplyGraph& g, const std::string& from, const std::string& to) {
  std::vector<size_t> work = {Find(g, from)};
  const size_t target = Find(g, to);
  std::vector<bool> seen(g.nodes.size());
  while (!work.empty()) {
    size_t n = work.back();
    work.pop_back();
    for (size_t s : g.nodes[n].successors) {
      if (s == target) return true;
      if (!seen[s]) work.push_back(s);
      seen[s] = true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("apply graph: an operation per change, no-ops none, counted edges") {
  Plan plan;
  plan.changes = {Change("network.core", Action::kCreate),
                  Change("instance.web", Action::kCreate, {"network.core"}),
                  Change("ssh_key.k", Action::kNoOp),
                  Change("volume.v", Action::kUpdate, {"instance.web"})};
  ApplyGraph g = ApplyGraph::FromPlan(plan);
  CHECK(g.acyclic);
  REQUIRE(g.nodes.size() == 3);
  CHECK(Before(g, "create network.core", "create instance.web"));
  CHECK(Before(g, "create instance.web", "update volume.v"));
  CHECK_FALSE(Before(g, "create instance.web", "create network.core"));
  int edges = 0, predecessors = 0;
  for (const ApplyNode& n : g.nodes) {
    edges += static_cast<int>(n.successors.size());
    predecessors += n.predecessors;
    CHECK_FALSE(n.journaled);
  }
  CHECK(edges == 2);
  CHECK(predecessors == edges);
}

TEST_CASE("apply graph: a replace deletes then creates, by default") {
  Plan plan;
  plan.changes = {Change("network.core", Action::kReplace),
                  Change("instance.web", Action::kUpdate, {"network.core"}, {"network.core"})};
  ApplyGraph g = ApplyGraph::FromPlan(plan);
  CHECK(g.acyclic);
  REQUIRE(g.nodes.size() == 3);
  CHECK(Before(g, "delete network.core", "create network.core"));
  // The update needs the new network, made after the delete.
  CHECK(Before(g, "create network.core", "update instance.web"));
  CHECK_FALSE(Before(g, "update instance.web", "delete network.core"));
}

TEST_CASE("apply graph: create before destroy deletes the deposed object last") {
  Plan plan;
  plan.changes = {Change("network.core", Action::kReplace),
                  Change("instance.web", Action::kUpdate, {"network.core"}, {"network.core"})};
  plan.changes[0].replace_order = ReplaceOrder::kCreateThenDelete;
  ApplyGraph g = ApplyGraph::FromPlan(plan);
  CHECK(g.acyclic);
  REQUIRE(g.nodes.size() == 3);
  CHECK(Before(g, "create network.core", "delete network.core (deposed)"));
  // The update moves to the new network before the old one goes.
  CHECK(Before(g, "create network.core", "update instance.web"));
  CHECK(Before(g, "update instance.web", "delete network.core (deposed)"));
}

TEST_CASE("apply graph: a delete waits for what used the object to be deleted") {
  Plan plan;
  plan.changes = {Change("instance.web", Action::kDelete, {}, {"network.core"}),
                  Change("network.core", Action::kDelete)};
  ApplyGraph g = ApplyGraph::FromPlan(plan);
  CHECK(g.acyclic);
  CHECK(Before(g, "delete instance.web", "delete network.core"));
  CHECK_FALSE(Before(g, "delete network.core", "delete instance.web"));
}

TEST_CASE("apply graph: the journal's entries are journaled nodes, independent, in order") {
  std::vector<PlannedChange> described = {Change("network.core", Action::kCreate),
                                          Change("instance.web (deposed)", Action::kDelete)};
  std::vector<JournalEntry> entries(2);
  entries[0] = {.seq = 7, .address = "network.core", .action = Action::kCreate, .body = "{}"};
  entries[1] = {.seq = 9, .address = "instance.web (deposed)", .action = Action::kDelete};
  ApplyGraph g = ApplyGraph::FromJournal(described, entries);
  CHECK(g.acyclic);
  REQUIRE(g.nodes.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const ApplyNode& n = g.nodes[i];
    CHECK(n.change == &described[i]);
    CHECK(n.op == entries[i].action);
    CHECK(n.successors.empty());
    CHECK(n.predecessors == 0);
    REQUIRE(n.journaled);
    CHECK(n.journaled->seq == entries[i].seq);
    CHECK_FALSE(n.deposed);  // the entry's address says it already
  }
}

}  // namespace apply_graph_test
