#include "engine/manifest/moved.h"

#include <algorithm>
#include <map>
#include <optional>
#include <variant>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

// One end of a move as written: a resource address or a module path.
struct MovedEnd {
  std::optional<ResourceAddress> resource;
  std::vector<ModuleStep> module;  // when no resource
};

// Whether `modules` (the module instances, and the calls with none) hold
// `path`: exactly, or with `whole` any instance of its last step's call.
bool DeclaresModule(const std::vector<std::vector<ModuleStep>>& modules,
                    const std::vector<ModuleStep>& path, bool whole) {
  for (const auto& m : modules) {
    if (m.size() != path.size()) continue;
    if (!std::equal(path.begin(), path.end() - 1, m.begin())) continue;
    if (m.back().name == path.back().name && (whole || m.back().index == path.back().index)) {
      return true;
    }
  }
  return false;
}

bool WithoutIndex(const AddressIndex& index) {
  return std::holds_alternative<std::monostate>(index);
}

}  // namespace

bool Declares(const DeclaredResources& declared, const ResourceAddress& addr) {
  auto g = declared.groups.find(addr.BaseString());
  if (g == declared.groups.end()) return false;
  for (size_t i : g->second.instances) {
    if (declared.resources[i].address == addr) return true;
  }
  return false;
}

Moves LoadMoves(const std::vector<const ManifestDocument*>& docs, const DeclaredResources& declared,
                std::vector<MovedConfig> implicit,
                const std::vector<std::vector<ModuleStep>>& modules) {
  Moves out;
  std::vector<Diagnostic>& diags = out.diagnostics;
  const SchemaRegistry& registry = declared.registry;
  const auto& groups = declared.groups;
  std::map<std::string, SourceLocation> first;  // by from
  for (const ManifestDocument* d : docs) {
    const ManifestDocument& doc = *d;
    MovedEnd ends[2];
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
      bool parsed = false;
      if (v.is_string()) {
        const std::string text = v.get<std::string>();
        if (auto path = ParseModulePath(text)) {
          ends[e].module = std::move(*path);
          parsed = true;
        } else if (auto addr = ResourceAddress::Parse(text)) {
          ends[e].resource = std::move(*addr);
          parsed = true;
        }
      }
      if (!parsed) {
        AddError(diags, "invalid_address",
                 std::string(key) + " must be a resource address or a module path, not " +
                     (v.is_string() ? "\"" + v.get<std::string>() + "\"" : ValueTypeNoun(v)),
                 at,
                 "kind.name, kind.name[0], kind.name[\"key\"], module.NAME or module.NAME[KEY]");
        ok = false;
      } else if (ends[e].resource && !registry.HasKind(ends[e].resource->kind)) {
        AddError(diags, "unknown_kind", "unknown kind \"" + ends[e].resource->kind + "\" in " + key,
                 at, DidYouMean(ends[e].resource->kind, registry.kinds()));
        ok = false;
      }
    }
    if (!ok) continue;
    SourceLocation from_loc = NodeLoc(doc.file, ChildNode(doc.node, "from"));
    SourceLocation to_loc = NodeLoc(doc.file, ChildNode(doc.node, "to"));
    MovedConfig m;
    m.location = doc.location;
    if (ends[0].resource && ends[1].resource) {
      m.from = *ends[0].resource;
      m.to = *ends[1].resource;
    } else if (!ends[0].resource && !ends[1].resource) {
      m.from_module = ends[0].module;
      m.to_module = ends[1].module;
    } else {
      AddError(diags, "moved_kind_mismatch",
               "cannot move " + doc.value["from"].get<std::string>() + " to " +
                   doc.value["to"].get<std::string>() +
                   ": a resource moves to a resource, a module to a module",
               to_loc);
      continue;
    }
    const std::string from_text = m.FromText();
    const std::string to_text = m.ToText();
    if (!m.IsModuleMove() && m.from.kind != m.to.kind) {
      AddError(diags, "moved_kind_mismatch",
               "cannot move a " + m.from.kind + " to " + to_text + ": an address keeps its kind",
               to_loc);
      continue;
    }
    if (from_text == to_text) {
      AddError(diags, "moved_to_itself", from_text + " is moved to itself", to_loc);
      continue;
    }
    if (auto [it, inserted] = first.emplace(from_text, from_loc); !inserted) {
      AddError(diags, "duplicate_moved", from_text + " is moved twice", from_loc,
               "first moved at " + LocationText(it->second));
      continue;
    }
    bool still_there = false, to_there = false;
    if (m.IsModuleMove()) {
      // As for resources: a module that gained count or for_each (module.a
      // -> module.a[0]) keeps its call; only FROM itself counts.
      const bool whole =
          WithoutIndex(m.from_module.back().index) && WithoutIndex(m.to_module.back().index);
      still_there = DeclaresModule(modules, m.from_module, whole);
      to_there = DeclaresModule(modules, m.to_module, whole);
    } else {
      const bool whole = WithoutIndex(m.from.index) && WithoutIndex(m.to.index);
      // FROM must be gone from the manifests. A resource that gained count
      // or for_each (web -> web[0]) keeps its base: only FROM itself counts.
      still_there = whole ? groups.count(m.from.BaseString()) > 0 : Declares(declared, m.from);
      to_there = whole ? groups.count(m.to.BaseString()) > 0 : Declares(declared, m.to);
    }
    if (still_there) {
      AddError(diags, "moved_from_declared",
               from_text + " is still declared: a move is from an address the manifests " +
                   "no longer have",
               from_loc,
               m.IsModuleMove() ? "rename the module in its document, then keep this move"
                                : "rename the resource in its document, then keep this move");
      continue;
    }
    if (!to_there) {
      std::string hint =
          m.IsModuleMove() ? ""
                           : DidYouMean(m.to.name, DeclaredNames(declared, m.to.kind, m.to.module));
      AddError(diags, "moved_to_undeclared", to_text + " is not declared in the manifests", to_loc,
               hint.empty() ? "a move is to an address the manifests declare" : hint);
      continue;
    }
    out.moved.push_back(std::move(m));
  }
  // The implied ones after the written ones, unless a written one moves
  // the same address.
  for (MovedConfig& m : implicit) {
    if (!first.count(m.from.ToString())) out.moved.push_back(std::move(m));
  }
  return out;
}

}  // namespace cairn
