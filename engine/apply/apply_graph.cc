#include "engine/apply/apply_graph.h"

#include <map>
#include <set>
#include <string>

#include "engine/graph/topological_order.h"

namespace cairn {

ApplyGraph ApplyGraph::FromPlan(const Plan& plan) {
  ApplyGraph g;
  std::vector<ApplyNode>& nodes = g.nodes;
  std::map<std::string, size_t> create_node, update_node, delete_node;
  auto add = [&](const PlannedChange& c, Action op, bool deposed) {
    nodes.push_back(ApplyNode{&c, op, deposed, {}, 0, std::nullopt});
    return nodes.size() - 1;
  };
  for (const auto& c : plan.changes) {
    switch (c.action) {
      case Action::kNoOp:
        break;
      case Action::kCreate:
        create_node[c.address] = add(c, Action::kCreate, false);
        break;
      case Action::kUpdate:
        update_node[c.address] = add(c, Action::kUpdate, false);
        break;
      case Action::kDelete:
        delete_node[c.address] = add(c, Action::kDelete, false);
        break;
      case Action::kReplace:
        delete_node[c.address] = add(c, Action::kDelete, c.CreatesBeforeDeleting());
        create_node[c.address] = add(c, Action::kCreate, false);
        break;
    }
  }
  auto edge = [&](size_t from, size_t to) {
    nodes[from].successors.push_back(to);
    ++nodes[to].predecessors;
  };
  auto find = [](const std::map<std::string, size_t>& m, const std::string& k) -> const size_t* {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  // Who refers to an address: through the old object (recorded
  // dependencies) or the new one (desired dependencies). Indexed once so
  // that building the graph stays linear in the number of edges.
  std::map<std::string, std::set<const PlannedChange*>> used_old_by, uses_new_by;
  for (const auto& c : plan.changes) {
    if (c.action == Action::kNoOp) continue;
    for (const auto& dep : c.prior_depends_on) used_old_by[dep].insert(&c);
    for (const auto& dep : c.depends_on) uses_new_by[dep].insert(&c);
  }
  for (const auto& c : plan.changes) {
    // Creates and updates after what they depend on.
    for (const auto* self : {find(create_node, c.address), find(update_node, c.address)}) {
      if (!self) continue;
      for (const auto& dep : c.depends_on) {
        if (const size_t* d = find(create_node, dep)) edge(*d, *self);
        if (const size_t* d = find(update_node, dep)) edge(*d, *self);
      }
    }
    if (const size_t* del = find(delete_node, c.address)) {
      // Deletes after whatever depended on the old object has let go of it.
      std::set<const PlannedChange*> related;
      for (const PlannedChange* other : used_old_by[c.address]) related.insert(other);
      for (const PlannedChange* other : uses_new_by[c.address]) related.insert(other);
      for (const PlannedChange* other : related) {
        if (other == &c) continue;
        bool used_old = used_old_by[c.address].count(other) > 0;
        bool uses_new = uses_new_by[c.address].count(other) > 0;
        // An update that still refers to the address needs the new object,
        // which a delete-then-create replace makes only after this delete,
        // so it runs after the create; ordering it before the delete too
        // was a cycle. The API lets go of a deleted object's references
        // (an instance leaves its firewalls; its volumes are detached).
        bool update_waits_for_new =
            uses_new && c.action == Action::kReplace && !c.CreatesBeforeDeleting();
        if (used_old) {
          if (const size_t* d = find(delete_node, other->address)) edge(*d, *del);
          if (const size_t* u = find(update_node, other->address); u && !update_waits_for_new) {
            edge(*u, *del);
          }
        }
        if (c.CreatesBeforeDeleting() && uses_new) {
          if (const size_t* n = find(create_node, other->address)) edge(*n, *del);
          if (const size_t* u = find(update_node, other->address)) edge(*u, *del);
        }
      }
      if (c.action == Action::kReplace) {
        size_t create = create_node.at(c.address);
        if (c.CreatesBeforeDeleting()) {
          edge(create, *del);
        } else {
          edge(*del, create);
        }
      }
    }
  }
  // The graph comes from a valid plan and is acyclic; prove it before running.
  std::vector<std::pair<size_t, size_t>> before;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t s : nodes[i].successors) before.emplace_back(i, s);
  }
  g.acyclic = SortTopologically(nodes.size(), before).acyclic();
  return g;
}

ApplyGraph ApplyGraph::FromJournal(std::span<const PlannedChange> changes,
                                   std::vector<JournalEntry> entries) {
  ApplyGraph g;
  for (size_t i = 0; i < entries.size() && i < changes.size(); ++i) {
    Action op = entries[i].action;
    g.nodes.push_back(ApplyNode{&changes[i], op, false, {}, 0, std::move(entries[i])});
  }
  return g;
}

std::string DeposedKey(const PlannedChange& change) {
  return StateKey{change.parsed_address, true}.ToString();
}

}  // namespace cairn
