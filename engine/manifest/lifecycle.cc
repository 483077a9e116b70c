#include "engine/manifest/lifecycle.h"

#include <algorithm>
#include <optional>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

const std::vector<std::string> kLifecycleKeys = {"ignore_changes",  "precondition",
                                                 "postcondition",   "replace_triggered_by",
                                                 "prevent_destroy", "create_before_destroy"};

// lifecycle.replace_triggered_by: addresses of the document's scope, each
// with an attribute or not.
void LoadTriggers(const ManifestDocument& doc, const Value& v, const YamlNode& node,
                  const std::vector<ModuleStep>& module, Lifecycle& lc,
                  std::vector<Diagnostic>& diags) {
  if (!v.is_array()) {
    AddError(diags, "wrong_type",
             "lifecycle.replace_triggered_by must be a list of addresses, not " + ValueTypeNoun(v),
             NodeLoc(doc.file, node));
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    SourceLocation at = NodeLoc(doc.file, node.IsSequence() && i < node.size() ? node[i] : node);
    Lifecycle::Trigger t;
    t.location = at;
    std::optional<ResourceAddress> addr;
    if (v[i].is_string()) {
      const std::string& text = v[i].get_ref<const std::string&>();
      addr = ResourceAddress::Parse(text);
      if (!addr) {
        // ADDRESS.ATTR
        size_t dot = text.rfind('.');
        if (dot != std::string::npos && dot > 0) {
          addr = ResourceAddress::Parse(text.substr(0, dot));
          if (addr) t.attr = text.substr(dot + 1);
        }
      }
    }
    if (!addr || !addr->module.empty()) {
      AddError(diags, "invalid_replace_trigger",
               "replace_triggered_by entries are addresses of this stack or module (network.a, "
               "instance.web[0], instance.web[0].image), not " +
                   (v[i].is_string() ? "\"" + v[i].get<std::string>() + "\"" : ValueTypeNoun(v[i])),
               at);
      continue;
    }
    t.whole = std::holds_alternative<std::monostate>(addr->index);
    addr->module = module;
    t.address = std::move(*addr);
    lc.replace_triggered_by.push_back(std::move(t));
  }
}

}  // namespace

Lifecycle LoadLifecycle(const ManifestDocument& doc, const SchemaRegistry& registry,
                        const std::vector<ModuleStep>& module, std::vector<Diagnostic>& diags) {
  Lifecycle lc;
  YamlNode node = ChildNode(doc.node, "lifecycle");
  const Value& v = doc.value["lifecycle"];
  if (!v.is_object()) {
    AddError(diags, "wrong_type", "lifecycle must be a mapping, not " + ValueTypeNoun(v),
             NodeLoc(doc.file, node));
    return lc;
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& key = it.key();
    YamlNode child = ChildNode(node, key);
    if (key == "prevent_destroy" || key == "create_before_destroy") {
      if (!it->is_boolean()) {
        AddError(diags, "wrong_type",
                 "lifecycle." + key + " must be true or false, not " + ValueTypeNoun(*it),
                 NodeLoc(doc.file, child));
      } else {
        (key == "prevent_destroy" ? lc.prevent_destroy : lc.create_before_destroy) =
            it->get<bool>();
      }
    } else if (key == "ignore_changes") {
      if (!it->is_array()) {
        AddError(
            diags, "wrong_type",
            "lifecycle.ignore_changes must be a list of field names, not " + ValueTypeNoun(*it),
            NodeLoc(doc.file, child));
        continue;
      }
      const auto& fields = registry.Fields(doc.kind);
      for (size_t i = 0; i < it->size(); ++i) {
        const Value& f = (*it)[i];
        SourceLocation at =
            NodeLoc(doc.file, child.IsSequence() && i < child.size() ? child[i] : child);
        if (!f.is_string()) {
          AddError(diags, "invalid_ignore_changes",
                   "lifecycle.ignore_changes items must be field names, not " + ValueTypeNoun(f),
                   at);
        } else if (registry.IsComputed(doc.kind, f.get<std::string>()) &&
                   std::find(fields.begin(), fields.end(), f.get<std::string>()) == fields.end()) {
          AddError(diags, "invalid_ignore_changes",
                   "ignore_changes names \"" + f.get<std::string>() +
                       "\", a computed attribute of " + doc.kind,
                   at, "only spec fields can be ignored: " + JoinNames(fields));
        } else if (std::find(fields.begin(), fields.end(), f.get<std::string>()) == fields.end()) {
          std::string hint = DidYouMean(f.get<std::string>(), fields);
          AddError(diags, "invalid_ignore_changes",
                   "ignore_changes names \"" + f.get<std::string>() +
                       "\", which is not a field of " + doc.kind,
                   at,
                   (hint.empty() ? "" : hint + "\n") + "fields of " + doc.kind + ": " +
                       JoinNames(fields));
        } else {
          lc.ignore_changes.push_back(f.get<std::string>());
        }
      }
    } else if (key == "precondition" || key == "postcondition") {
      // Evaluated per instance (MakeInstances: LoadConditions).
    } else if (key == "replace_triggered_by") {
      LoadTriggers(doc, *it, child, module, lc, diags);
    } else {
      AddError(diags, "unknown_field", "unknown field \"" + key + "\" in lifecycle",
               KeyLoc(doc.file, node, key), DidYouMean(key, kLifecycleKeys));
    }
  }
  return lc;
}

std::vector<std::pair<ResourceAddress, SourceLocation>> LoadDependsOn(
    const ManifestDocument& doc, const std::vector<ModuleStep>& module,
    std::vector<Diagnostic>& diags) {
  std::vector<std::pair<ResourceAddress, SourceLocation>> out;
  YamlNode node = ChildNode(doc.node, "depends_on");
  const Value& d = doc.value["depends_on"];
  if (!d.is_array()) {
    AddError(diags, "invalid_depends_on",
             "depends_on must be a list of resource addresses, not " + ValueTypeNoun(d),
             NodeLoc(doc.file, node));
    return out;
  }
  for (size_t i = 0; i < d.size(); ++i) {
    SourceLocation at = NodeLoc(doc.file, node.IsSequence() && i < node.size() ? node[i] : node);
    std::optional<ResourceAddress> addr;
    if (d[i].is_string()) {
      // module.NAME (module.NAME[KEY]): every resource of that module
      // call (instance), as a kind-less address (graph_edges.h).
      if (auto path = ParseModulePath(d[i].get<std::string>())) {
        ResourceAddress whole_module;
        whole_module.module = module;
        whole_module.module.insert(whole_module.module.end(), path->begin(), path->end());
        out.push_back({std::move(whole_module), at});
        continue;
      }
      addr = ResourceAddress::Parse(d[i].get<std::string>());
    }
    if (addr && !addr->module.empty()) {
      AddError(diags, "module_internal_reference",
               "depends_on cannot name " + addr->ToString() + ": a module's resources are its own",
               at, "depend on what the module's outputs refer to instead");
      continue;
    }
    if (!addr) {
      AddError(
          diags, "invalid_depends_on",
          "depends_on entry " +
              (d[i].is_string() ? "\"" + d[i].get<std::string>() + "\"" : ValueTypeNoun(d[i])) +
              " is not a resource address",
          at,
          "write addresses such as firewall.edge, instance.web[0], instance.web[\"eu\"] or "
          "module.app");
      continue;
    }
    addr->module = module;
    out.push_back({*addr, at});
  }
  return out;
}

}  // namespace cairn
