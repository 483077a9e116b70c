#include "engine/manifest/module_scopes.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/env.h"
#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/evaluate.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

ModuleScope ChildScope(const ModuleScopes& scopes, size_t parent, const std::string& name,
                       const AddressIndex& index, const std::string& dir, size_t call_doc) {
  ModuleScope child;
  child.path = scopes[parent].path;
  child.path.push_back({name, index});
  child.prefix = ModulePathPrefix(child.path);
  child.dir = dir;
  child.parent = parent;
  child.call_doc = call_doc;
  return child;
}

std::string ModuleScopeName(const ModuleScopes& scopes, size_t s) {
  std::string out;
  for (const ModuleStep& step : scopes[s].path)
    out += (out.empty() ? "" : ".") + step.name + IndexText(step.index);
  return out;
}

std::variant<size_t, std::string> FindModuleScope(const ModuleScopes& scopes,
                                                  const std::vector<ModuleStep>& path) {
  size_t s = 0;
  for (const ModuleStep& step : path) {
    const ModuleScope& sc = scopes[s];
    auto found = sc.calls.find(step.name);
    std::string base = sc.prefix + "module." + step.name;
    if (found == sc.calls.end()) {
      std::vector<std::string> names;
      for (const auto& [name, c] : sc.calls) names.push_back(name);
      std::string hint = DidYouMean(step.name, names);
      return "reference to undeclared module " + base + (hint.empty() ? "" : "; " + hint);
    }
    const ModuleCall& c = found->second;
    if (c.broken) return std::string();
    const bool no_index = std::holds_alternative<std::monostate>(step.index);
    if (c.mode == ResourceGroup::Mode::kSingle && !no_index)
      return base + " has neither count nor for_each; refer to it without an index";
    if (c.mode != ResourceGroup::Mode::kSingle && no_index)
      return base + " has " +
             (c.mode == ResourceGroup::Mode::kCount
                  ? "count; name one instance (" + base + "[0].OUTPUT)"
                  : "for_each; name one instance (" + base + "[\"KEY\"].OUTPUT)");
    auto inst = std::find_if(c.instances.begin(), c.instances.end(),
                             [&](const auto& i) { return i.first == step.index; });
    if (inst == c.instances.end())
      return base + IndexText(step.index) + " does not exist: " + base + " has " +
             std::to_string(c.instances.size()) +
             (c.instances.size() == 1 ? " instance" : " instances");
    s = inst->second;
  }
  return s;
}

std::vector<std::vector<ModuleStep>> ModuleInstancePaths(const ModuleScopes& scopes) {
  std::vector<std::vector<ModuleStep>> modules;
  for (size_t s = 1; s < scopes.size(); ++s) modules.push_back(scopes[s].path);
  for (const ModuleScope& scope : scopes) {
    for (const auto& [name, call] : scope.calls) {
      if (!call.instances.empty() || call.broken) continue;
      modules.push_back(scope.path);
      modules.back().push_back({name, {}});
    }
  }
  return modules;
}

std::optional<ModuleSource> CheckModuleSource(const ModuleScopes& scopes, size_t s,
                                              const ManifestDocument& doc, const Env& env,
                                              std::vector<Diagnostic>& diags) {
  const Value& source = doc.value.contains("source") ? doc.value["source"] : Value();
  SourceLocation source_loc = NodeLoc(doc.file, ChildNode(doc.node, "source"));
  if (!source.is_string() || source.get_ref<const std::string&>().empty()) {
    AddError(diags, source.is_null() ? "missing_field" : "wrong_type",
             "a module document needs source: the directory of the module's manifests",
             source.is_null() ? doc.location : source_loc,
             "source: ./modules/app (relative to the directory of this file)");
    return std::nullopt;
  }
  const std::string& rel = source.get_ref<const std::string&>();
  ModuleSource out;
  out.dir = (std::filesystem::path(doc.dir) / rel).lexically_normal().string();
  out.location = source_loc;
  if (!env.IsDirectory(out.dir)) {
    AddError(diags, "module_not_found", "module source \"" + rel + "\" is not a directory",
             source_loc,
             "a module's source is relative to the directory of the manifest that declares it: " +
                 out.dir);
    return std::nullopt;
  }
  out.canonical = env.Canonical(out.dir);
  for (size_t a = s;; a = scopes[a].parent) {
    if (scopes[a].dir == out.canonical) {
      AddError(diags, "module_cycle",
               "module \"" + doc.name + "\" uses itself: source \"" + rel + "\" is " +
                   (a == 0 ? "the stack" : "module " + ModuleScopeName(scopes, a)) +
                   (a == s ? ", which declares it" : ", which leads here"),
               source_loc, "a module cannot use itself, directly or through other modules");
      return std::nullopt;
    }
    if (a == 0) break;
  }
  if (scopes[s].path.size() >= kMaxModuleDepth) {
    AddError(diags, "too_many_modules",
             "modules nest more than " + std::to_string(kMaxModuleDepth) + " levels deep",
             source_loc);
    return std::nullopt;
  }
  return out;
}

ModuleInputs ResolveModuleInputs(const std::map<std::string, DeclaredVariable>& variables,
                                 const Value& inputs,
                                 const std::map<std::string, std::string>& sensitive,
                                 const ManifestDocument& call, const std::string& scope_name) {
  ModuleInputs out;
  std::vector<std::string> names;
  for (const auto& [name, info] : variables) names.push_back(name);
  YamlNode inputs_node = ChildNode(call.node, "inputs");
  std::set<std::string> given;
  for (auto it = inputs.begin(); it != inputs.end(); ++it) {
    given.insert(it.key());
    auto var = variables.find(it.key());
    if (var == variables.end()) {
      std::string hint = DidYouMean(it.key(), names);
      AddError(
          out.diagnostics, "unknown_input",
          "module \"" + call.name + "\" has no variable \"" + it.key() + "\"",
          KeyLoc(call.file, inputs_node, it.key()),
          hint.empty() ? "its variables: " + (names.empty() ? "none" : JoinNames(names)) : hint);
      continue;
    }
    if (!HoldsExpressions(*it) && !TypeMatches(*it, var->second.type)) {
      AddError(out.diagnostics, "wrong_type",
               "input \"" + it.key() + "\" of module \"" + call.name + "\" must be " +
                   VariableTypeNoun(var->second.type) + ", not " + ValueTypeNoun(*it),
               NodeLoc(call.file, ChildNode(inputs_node, it.key())));
      continue;
    }
    if (var->second.sensitive && it->is_string() && !HoldsExpressions(*it))
      out.secrets.push_back(it->get<std::string>());
    if (auto why = sensitive.find(it.key()); why != sensitive.end())
      out.sensitive_inputs.emplace(it.key(), why->second);
    out.values[it.key()] = *it;
    out.origins[it.key()] = {"the input of module " + scope_name,
                             NodeLoc(call.file, ChildNode(inputs_node, it.key()))};
  }
  for (const auto& [name, info] : variables) {
    if (given.count(name)) continue;
    if (info.value) {
      if (info.sensitive && info.value->is_string())
        out.secrets.push_back(info.value->get<std::string>());
      out.values[name] = EscapeTemplateValue(*info.value);
      out.origins[name] = {"its default", info.default_location};
      continue;
    }
    AddError(out.diagnostics, "missing_input",
             "module \"" + call.name + "\" needs input \"" + name + "\"", call.location,
             "its variable \"" + name + "\" (" + LocationText(info.location) +
                 ") has no default; set it under inputs:");
  }
  return out;
}

std::optional<size_t> CheckModuleOutputUse(const ModuleScopes& scopes,
                                           const SchemaRegistry& registry, const Expression& use,
                                           const SourceLocation& at,
                                           std::vector<Diagnostic>& diags) {
  auto found = FindModuleScope(scopes, use.target.module);
  if (const auto* msg = std::get_if<std::string>(&found)) {
    if (!msg->empty()) AddError(diags, "unknown_module", *msg, at);
    return std::nullopt;
  }
  const size_t s = std::get<size_t>(found);
  const ModuleScope& sc = scopes[s];
  if (!sc.outputs.count(use.attr) && registry.HasKind(use.attr)) {
    AddError(diags, "module_internal_reference",
             "cannot refer to the " + use.attr + " resources of module " +
                 ModuleScopeName(scopes, s) + ": a module's resources are its own",
             at, "refer to one of the module's outputs: ${module.NAME.OUTPUT}");
    return std::nullopt;
  }
  if (!sc.outputs.count(use.attr)) {
    std::vector<std::string> names;
    for (const auto& [name, i] : sc.outputs) names.push_back(name);
    std::string hint = DidYouMean(use.attr, names);
    AddError(diags, "unknown_output",
             "module " + ModuleScopeName(scopes, s) + " has no output \"" + use.attr + "\"", at,
             hint.empty() ? "its outputs: " + (names.empty() ? "none" : JoinNames(names)) : hint);
    return std::nullopt;
  }
  return s;
}

}  // namespace cairn
