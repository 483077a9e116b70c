#include "engine/manifest/removed.h"

#include <map>
#include <variant>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/moved.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

constexpr const char* kRemovedExample =
    "for example, from: instance.web with lifecycle: {destroy: false}";

// Reads `lifecycle: {destroy: BOOL}` into `r`; false when it is malformed.
bool ReadRemovedLifecycle(const ManifestDocument& doc, RemovedConfig& r,
                          std::vector<Diagnostic>& diags) {
  if (!doc.value.contains("lifecycle")) return true;
  const Value& l = doc.value["lifecycle"];
  YamlNode node = ChildNode(doc.node, "lifecycle");
  if (!l.is_object()) {
    AddError(diags, "wrong_type", "lifecycle must be a mapping, not " + ValueTypeNoun(l),
             NodeLoc(doc.file, node), "lifecycle: {destroy: false}");
    return false;
  }
  bool ok = true;
  for (auto it = l.begin(); it != l.end(); ++it) {
    if (it.key() == "destroy") continue;
    AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in removed lifecycle",
             KeyLoc(doc.file, node, it.key()), "a removed document's lifecycle holds destroy only");
    ok = false;
  }
  if (l.contains("destroy")) {
    const Value& d = l["destroy"];
    if (!d.is_boolean()) {
      AddError(diags, "wrong_type", "destroy must be true or false, not " + ValueTypeNoun(d),
               NodeLoc(doc.file, ChildNode(node, "destroy")),
               "false: forget it, leaving it in place; true: delete it");
      ok = false;
    } else {
      r.destroy = d.get<bool>();
    }
  }
  return ok;
}

// Whether the manifests still declare what `r` removes, and what, for the
// message.
std::string StillDeclared(const RemovedConfig& r, const DeclaredResources& declared,
                          const std::vector<std::vector<ModuleStep>>& modules) {
  if (r.resource) {
    const bool whole = std::holds_alternative<std::monostate>(r.resource->index);
    if (whole ? declared.groups.count(r.resource->BaseString()) > 0
              : Declares(declared, *r.resource)) {
      return r.resource->ToString();
    }
    return "";
  }
  for (const auto& path : modules) {
    if (InModule(path, r.module)) {
      std::string prefix = ModulePathPrefix(path);
      return prefix.substr(0, prefix.size() - 1);
    }
  }
  return "";
}

}  // namespace

Removals LoadRemovals(const std::vector<const ManifestDocument*>& docs,
                      const DeclaredResources& declared,
                      const std::vector<std::vector<ModuleStep>>& modules) {
  Removals out;
  std::vector<Diagnostic>& diags = out.diagnostics;
  std::map<std::string, SourceLocation> first;  // by from
  for (const ManifestDocument* d : docs) {
    const ManifestDocument& doc = *d;
    if (!doc.value.contains("from")) {
      AddError(diags, "missing_field", "missing required field \"from\" in removed document",
               doc.location, kRemovedExample);
      continue;
    }
    RemovedConfig r;
    r.location = NodeLoc(doc.file, ChildNode(doc.node, "from"));
    const Value& v = doc.value["from"];
    bool parsed = false;
    if (v.is_string()) {
      const std::string text = v.get<std::string>();
      if (auto path = ParseModulePath(text)) {
        r.module = std::move(*path);
        parsed = true;
      } else if (auto addr = ResourceAddress::Parse(text)) {
        r.resource = std::move(*addr);
        parsed = true;
      }
    }
    if (!parsed) {
      AddError(diags, "invalid_address",
               std::string("from must be a resource address or a module path, not ") +
                   (v.is_string() ? "\"" + v.get<std::string>() + "\"" : ValueTypeNoun(v)),
               r.location,
               "kind.name, kind.name[0], kind.name[\"key\"], module.NAME or module.NAME[KEY]");
      continue;
    }
    if (r.resource && !declared.registry.HasKind(r.resource->kind)) {
      AddError(diags, "unknown_kind", "unknown kind \"" + r.resource->kind + "\" in from",
               r.location, DidYouMean(r.resource->kind, declared.registry.kinds()));
      continue;
    }
    if (!ReadRemovedLifecycle(doc, r, diags)) continue;
    const std::string from = r.FromText();
    if (auto [it, inserted] = first.emplace(from, r.location); !inserted) {
      AddError(diags, "duplicate_removed", from + " is removed twice", r.location,
               "first removed at " + LocationText(it->second));
      continue;
    }
    if (std::string still = StillDeclared(r, declared, modules); !still.empty()) {
      AddError(diags, "removed_still_declared",
               from + " is still declared" + (still == from ? "" : " (" + still + ")") +
                   ": a removed document names what the manifests no longer have",
               r.location,
               "delete its document too, or drop this removed document to keep managing it");
      continue;
    }
    out.removed.push_back(std::move(r));
  }
  return out;
}

}  // namespace cairn
