#include "engine/state/moves.h"

#include <algorithm>
#include <map>
#include <variant>

namespace cairn {

MovePlan PlanMove(const StateSnapshot& state, const ResourceAddress& from,
                  const ResourceAddress& to) {
  MovePlan plan;
  std::vector<std::string> instances;  // FROM[i] moved as part of a whole resource
  // A deposed object (a create_before_destroy replace's old one) moves
  // with its instance.
  for (const auto& [text, rs] : state.resources) {
    auto key = StateKey::Parse(text);
    if (!key) continue;
    const ResourceAddress* a = &key->resource;
    if (a->module != from.module || a->kind != from.kind || a->name != from.name) continue;
    if (a->index == from.index) {
      plan.moves.emplace_back(text, StateKey{to, key->deposed}.ToString());
    } else if (std::holds_alternative<std::monostate>(from.index)) {
      if (*a == to) continue;  // gained count or for_each, and moved already
      if (!key->deposed) instances.push_back(text);
      plan.moves.emplace_back(
          text, StateKey{ResourceAddress{to.kind, to.name, a->index, to.module}, key->deposed}
                    .ToString());
    }
  }
  std::sort(plan.moves.begin(), plan.moves.end(),
            [](const auto& a, const auto& b) { return AddressTextLess(a.first, b.first); });
  if (plan.moves.empty()) {
    plan.error = from.ToString() + " is not in the state (see 'cairn state list')";
  } else if (!instances.empty() && !std::holds_alternative<std::monostate>(to.index)) {
    // FROM[i] would go to TO[j][i], which is no address.
    plan.error = from.ToString() + " has " + std::to_string(instances.size()) + " instance(s) (" +
                 instances.front() + (instances.size() > 1 ? ", ..." : "") +
                 "): move them all to an address without an index (" + to.BaseString() +
                 "), or one instance at a time";
  }
  return plan;
}

MovePlan PlanModuleMove(const StateSnapshot& state, const std::vector<ModuleStep>& from,
                        const std::vector<ModuleStep>& to) {
  MovePlan plan;
  if (from.empty() || to.empty()) {
    plan.error = "internal error: a module move without a module path, please report";
    return plan;
  }
  const size_t last = from.size() - 1;
  const bool from_whole = std::holds_alternative<std::monostate>(from[last].index);
  const bool to_whole = std::holds_alternative<std::monostate>(to.back().index);
  std::vector<std::string> instances;  // moved as instances of a whole `from`
  for (const auto& [text, rs] : state.resources) {
    auto key = StateKey::Parse(text);  // a deposed object moves with its instance
    if (!key) continue;
    const ResourceAddress* a = &key->resource;
    if (a->module.size() < from.size()) continue;
    if (!std::equal(from.begin(), from.begin() + last, a->module.begin())) continue;
    const ModuleStep& step = a->module[last];
    if (step.name != from[last].name || (!from_whole && step.index != from[last].index)) continue;
    // Gained count or for_each (module.a -> module.a[0]), and moved already.
    if (from_whole && !to_whole && std::equal(to.begin(), to.end(), a->module.begin())) continue;
    ResourceAddress moved = *a;
    moved.module = to;
    if (from_whole && !std::holds_alternative<std::monostate>(step.index)) {
      instances.push_back(text);
      if (to_whole) moved.module.back().index = step.index;
    }
    moved.module.insert(moved.module.end(), a->module.begin() + from.size(), a->module.end());
    plan.moves.emplace_back(text, StateKey{moved, key->deposed}.ToString());
  }
  std::sort(plan.moves.begin(), plan.moves.end(),
            [](const auto& a, const auto& b) { return AddressTextLess(a.first, b.first); });
  std::string from_text = ModulePathPrefix(from);
  from_text.pop_back();
  if (plan.moves.empty()) {
    plan.error = "nothing in the state is in " + from_text + " (see 'cairn state list')";
  } else if (!instances.empty() && !to_whole) {
    std::string to_text = ModulePathPrefix(to);
    to_text.pop_back();
    plan.error = from_text + " has instances (" + instances.front() +
                 (instances.size() > 1 ? ", ..." : "") + "): move them all to " +
                 to_text.substr(0, to_text.rfind('[')) + ", or one instance at a time";
  }
  return plan;
}

namespace {

// Renames the dependencies of `rs` that moved; true if any did.
bool RenameDependencies(ResourceState& rs, const std::map<std::string, std::string>& renamed) {
  bool changed = false;
  for (std::string& dep : rs.depends_on) {
    if (auto it = renamed.find(dep); it != renamed.end()) {
      dep = it->second;
      changed = true;
    }
  }
  return changed;
}

}  // namespace

AddressMoves NetMoves(const AddressMoves& moves) {
  AddressMoves out;
  for (const auto& move : moves) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.second == move.first; });
    if (it != out.end()) {
      it->second = move.second;
    } else {
      out.push_back(move);
    }
  }
  return out;
}

StateSnapshot ApplyMoves(const StateSnapshot& state, const AddressMoves& moves) {
  std::map<std::string, std::string> renamed(moves.begin(), moves.end());
  StateSnapshot out = state;
  out.resources.clear();
  for (const auto& [text, rs] : state.resources) {
    ResourceState moved = rs;
    RenameDependencies(moved, renamed);
    if (auto it = renamed.find(text); it != renamed.end()) moved.address = it->second;
    out.resources.emplace(moved.address, std::move(moved));
  }
  return out;
}

StateCommit MoveCommit(const StateSnapshot& state, const AddressMoves& moves) {
  std::map<std::string, std::string> renamed(moves.begin(), moves.end());
  StateCommit commit{.moves = moves};
  for (const auto& [text, rs] : state.resources) {
    ResourceState updated = rs;
    if (!RenameDependencies(updated, renamed)) continue;
    if (auto it = renamed.find(text); it != renamed.end()) updated.address = it->second;
    commit.put.push_back(std::move(updated));
  }
  return commit;
}

}  // namespace cairn
