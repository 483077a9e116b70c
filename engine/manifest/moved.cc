#include "engine/manifest/moved.h"

#include <map>
#include <optional>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

bool Declares(const DeclaredResources& declared, const ResourceAddress& addr) {
  auto g = declared.groups.find(addr.BaseString());
  if (g == declared.groups.end()) return false;
  for (size_t i : g->second.instances) {
    if (declared.resources[i].address == addr) return true;
  }
  return false;
}

Moves LoadMoves(const std::vector<const ManifestDocument*>& docs, const DeclaredResources& declared,
                std::vector<MovedConfig> implicit) {
  Moves out;
  std::vector<Diagnostic>& diags = out.diagnostics;
  const SchemaRegistry& registry = declared.registry;
  const auto& groups = declared.groups;
  std::map<std::string, SourceLocation> first;  // by from
  for (const ManifestDocument* d : docs) {
    const ManifestDocument& doc = *d;
    std::optional<ResourceAddress> ends[2];
    bool ok = true;
    for (int e = 0; e < 2; ++e) {
      const char* key = e == 0 ? "from" : "to";
      if (!doc.value.contains(key)) {
        AddError(diags, "missing_field",
                 std::string("missing required field \"") + key + "\" in moved document",
                 doc.location, "moved: {from: instance.old, to: instance.new}");
        ok = false;
        continue;
      }
      SourceLocation at = NodeLoc(doc.file, ChildNode(doc.node, key));
      const Value& v = doc.value[key];
      if (v.is_string()) ends[e] = ResourceAddress::Parse(v.get<std::string>());
      if (!ends[e]) {
        AddError(diags, "invalid_address",
                 std::string(key) + " must be a resource address, not " +
                     (v.is_string() ? "\"" + v.get<std::string>() + "\"" : ValueTypeNoun(v)),
                 at, "kind.name, kind.name[0] or kind.name[\"key\"]");
        ok = false;
      } else if (!registry.HasKind(ends[e]->kind)) {
        AddError(diags, "unknown_kind", "unknown kind \"" + ends[e]->kind + "\" in " + key, at,
                 DidYouMean(ends[e]->kind, registry.kinds()));
        ok = false;
      }
    }
    if (!ok) continue;
    const ResourceAddress& from = *ends[0];
    const ResourceAddress& to = *ends[1];
    SourceLocation from_loc = NodeLoc(doc.file, ChildNode(doc.node, "from"));
    SourceLocation to_loc = NodeLoc(doc.file, ChildNode(doc.node, "to"));
    if (from.kind != to.kind) {
      AddError(
          diags, "moved_kind_mismatch",
          "cannot move a " + from.kind + " to " + to.ToString() + ": an address keeps its kind",
          to_loc);
      continue;
    }
    if (from == to) {
      AddError(diags, "moved_to_itself", from.ToString() + " is moved to itself", to_loc);
      continue;
    }
    if (auto [it, inserted] = first.emplace(from.ToString(), from_loc); !inserted) {
      AddError(diags, "duplicate_moved", from.ToString() + " is moved twice", from_loc,
               "first moved at " + LocationText(it->second));
      continue;
    }
    const bool from_whole = std::holds_alternative<std::monostate>(from.index);
    const bool to_whole = std::holds_alternative<std::monostate>(to.index);
    // FROM must be gone from the manifests. A resource that gained count
    // or for_each (web -> web[0]) keeps its base: only FROM itself counts.
    auto g = groups.find(from.BaseString());
    const bool still_there = from_whole && to_whole ? g != groups.end() : Declares(declared, from);
    if (still_there) {
      AddError(diags, "moved_from_declared",
               from.ToString() + " is still declared: a move is from an address the manifests " +
                   "no longer have",
               from_loc, "rename the resource in its document, then keep this move");
      continue;
    }
    const bool to_there =
        from_whole && to_whole ? groups.count(to.BaseString()) > 0 : Declares(declared, to);
    if (!to_there) {
      std::string hint = DidYouMean(to.name, DeclaredNames(declared, to.kind, to.module));
      AddError(diags, "moved_to_undeclared", to.ToString() + " is not declared in the manifests",
               to_loc, hint.empty() ? "a move is to an address the manifests declare" : hint);
      continue;
    }
    out.moved.push_back({from, to, doc.location});
  }
  // The implied ones after the written ones, unless a written one moves
  // the same address.
  for (MovedConfig& m : implicit) {
    if (!first.count(m.from.ToString())) out.moved.push_back(std::move(m));
  }
  return out;
}

}  // namespace cairn
