#include "engine/operations/state_check.h"

#include <algorithm>
#include <limits>

#include "engine/address.h"
#include "engine/graph/dependency_graph.h"

namespace cairn {
namespace {

SourceLocation Where(const StateCheckOptions& options, const std::string& address) {
  auto it = options.locations.find(address);
  return it == options.locations.end() ? SourceLocation{} : it->second;
}

std::string Canonical(const StateCheckOptions& options, const std::string& id) {
  return CanonicalId(options.kinds, id);
}

// The resources tracking each remote object, by canonical id, in the order
// they are written (options.locations), then in address order.
std::map<std::string, std::vector<std::string>> AddressesById(const StateSnapshot& state,
                                                              const StateCheckOptions& options) {
  std::vector<const ResourceState*> sorted;
  for (const auto& [addr, rs] : state.resources) sorted.push_back(&rs);
  auto line = [&](const ResourceState* rs) {
    const SourceLocation at = Where(options, rs->address);
    return at.has_position() ? at.line : std::numeric_limits<int>::max();
  };
  std::sort(sorted.begin(), sorted.end(), [&](const ResourceState* a, const ResourceState* b) {
    if (line(a) != line(b)) return line(a) < line(b);
    return AddressTextLess(a->address, b->address);
  });
  std::map<std::string, std::vector<std::string>> out;
  for (const ResourceState* rs : sorted) {
    if (!rs->id.empty()) out[Canonical(options, rs->id)].push_back(rs->address);
  }
  return out;
}

Diagnostic DuplicateId(const StateSnapshot& state, const std::string& address,
                       const std::string& first, const StateCheckOptions& options) {
  const ResourceState& rs = state.resources.at(address);
  const ResourceState& tracked = state.resources.at(first);
  return {Severity::kError, "duplicate_id",
          address + ": " + rs.kind + " " + rs.id + " is tracked at " + first + " already" +
              (tracked.id == rs.id ? "" : " (as " + tracked.id + ")"),
          "one remote object has one address: apply would manage it twice. Keep one: "
          "'cairn state rm' the other, or 'cairn state mv " +
              first + " " + address + "' to give it this address",
          Where(options, address)};
}

}  // namespace

std::vector<Diagnostic> CheckState(const StateSnapshot& state, const StateCheckOptions& options) {
  std::vector<Diagnostic> out;
  // One node per resource that others may depend on (a deposed object is
  // nobody's dependency, so never on a cycle).
  DependencyGraph graph;
  std::map<std::string, size_t> node;
  for (const auto& [addr, rs] : state.resources) {
    auto parsed = StateKey::Parse(addr);
    if (!parsed || parsed->ToString() != addr) {
      out.push_back({Severity::kError, "invalid_state_address",
                     "\"" + addr + "\" is not a resource address",
                     "addresses look like KIND.NAME, KIND.NAME[2] or KIND.NAME[\"key\"]",
                     Where(options, addr)});
      continue;
    }
    if (!parsed->deposed) node[addr] = graph.AddNode(parsed->resource);
  }
  for (const auto& [addr, rs] : state.resources) {
    const SourceLocation at = Where(options, addr);
    if (!options.kinds.empty() && !options.kinds.count(rs.kind)) {
      out.push_back({Severity::kError, "unknown_kind",
                     addr + " is of kind " + rs.kind + ", which this Cairn does not know",
                     "`cairn schema` lists the kinds", at});
    }
    const bool is_id = options.is_id ? options.is_id(rs.id) : !rs.id.empty();
    if (!is_id) {
      out.push_back({Severity::kError, "invalid_id", addr + ": \"" + rs.id + "\" is not an id",
                     "an id is what the API returned for the object (letters, digits, '-', '_', "
                     "'.', '~'); 'cairn import' records it from the object itself",
                     at});
    }
    auto from = node.find(addr);
    for (const std::string& dep : rs.depends_on) {
      auto to = node.find(dep);
      if (to == node.end()) {
        out.push_back({Severity::kError, "unknown_depends_on",
                       addr + " depends on " + dep + ", which the state does not record",
                       "a dependency is a resource of the same state; remove the entry", at});
        continue;
      }
      if (from != node.end()) graph.AddEdge(from->second, to->second, at);
    }
  }
  for (const DependencyCycle& cycle : graph.FindCycles()) {
    out.push_back({Severity::kError, "dependency_cycle",
                   "depends_on entries form a cycle: " + cycle.ToString(),
                   "destroy deletes dependents first, which a cycle makes impossible; remove one "
                   "of the entries",
                   cycle.location});
  }
  for (const auto& [id, addresses] : AddressesById(state, options)) {
    for (size_t i = 1; i < addresses.size(); ++i) {
      out.push_back(DuplicateId(state, addresses[i], addresses[0], options));
    }
  }
  SortDiagnostics(out);
  return out;
}

std::vector<Diagnostic> CheckTrackedOnce(const StateSnapshot& state,
                                         const std::vector<std::string>& added,
                                         const StateCheckOptions& options) {
  std::vector<Diagnostic> out;
  std::map<std::string, std::vector<std::string>> by_id = AddressesById(state, options);
  const std::set<std::string> adding(added.begin(), added.end());
  for (const std::string& address : added) {
    auto rs = state.resources.find(address);
    if (rs == state.resources.end() || rs->second.id.empty()) continue;
    const std::vector<std::string>& same = by_id[Canonical(options, rs->second.id)];
    // Named after the address that held it before; among addresses given it
    // together, reported once, at all but the first.
    auto before = std::find_if(same.begin(), same.end(),
                               [&](const std::string& a) { return !adding.count(a); });
    if (before != same.end()) {
      out.push_back(DuplicateId(state, address, *before, options));
    } else if (same.size() > 1 && same.front() != address) {
      out.push_back(DuplicateId(state, address, same.front(), options));
    }
  }
  return out;
}

}  // namespace cairn
