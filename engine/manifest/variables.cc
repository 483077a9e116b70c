#include "engine/manifest/variables.h"

#include <algorithm>

#include "base/schema/suggest.h"
#include "engine/manifest/yaml_tree.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

const std::vector<std::string> kVariableTypes = {"string", "number", "bool", "list", "map", "any"};

std::string VariableTypeNoun(const std::string& type) {
  if (type == "string") return "a string";
  if (type == "number") return "a number";
  if (type == "bool") return "a boolean";
  if (type == "list") return "a list";
  if (type == "map") return "a mapping";
  return "any value";
}

bool TypeMatches(const Value& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "bool") return v.is_boolean();
  if (type == "list") return v.is_array();
  if (type == "map") return v.is_object();
  return true;
}

std::optional<Value> ParseVariableText(const std::string& text, const std::string& type) {
  if (type == "string" || type == "any") return Value(text);
  if (type == "number") {
    Value v = PlainScalar(text);
    if (v.is_number()) return v;
    return std::nullopt;
  }
  if (type == "bool") {
    if (text == "true") return Value(true);
    if (text == "false") return Value(false);
    return std::nullopt;
  }
  try {
    auto tree = YamlTree::Parse(text);
    if (tree->error || !tree->bad_bytes.empty() || tree->documents.size() != 1) return std::nullopt;
    size_t budget = 0;
    std::vector<Diagnostic> problems;
    Value v = YamlToValue("", tree->documents[0], 0, budget, problems);
    if (!problems.empty() || !TypeMatches(v, type)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

VariableDecl ParseVariableDecl(const std::string& name, const Value& doc, const KeyLocator& at,
                               std::vector<Diagnostic>& diags) {
  VariableDecl decl;
  decl.name = name;
  decl.location = at("name");
  bool ok = true;
  if (doc.contains("type")) {
    const Value& t = doc["type"];
    if (!t.is_string() || std::find(kVariableTypes.begin(), kVariableTypes.end(),
                                    t.get<std::string>()) == kVariableTypes.end()) {
      AddError(diags, "invalid_value", "variable type must be one of " + JoinNames(kVariableTypes),
               at("type"));
      ok = false;
    } else {
      decl.type = t.get<std::string>();
    }
  }
  if (doc.contains("sensitive")) {
    if (!doc["sensitive"].is_boolean()) {
      AddError(diags, "wrong_type",
               "sensitive must be true or false, not " + ValueTypeNoun(doc["sensitive"]),
               at("sensitive"));
    } else {
      decl.sensitive = doc["sensitive"].get<bool>();
    }
  }
  if (doc.contains("ephemeral")) {
    if (!doc["ephemeral"].is_boolean()) {
      AddError(diags, "wrong_type",
               "ephemeral must be true or false, not " + ValueTypeNoun(doc["ephemeral"]),
               at("ephemeral"));
    } else if (doc["ephemeral"].get<bool>()) {
      decl.ephemeral = true;
      decl.sensitive = true;  // never shown either
    }
  }
  if (doc.contains("description") && !doc["description"].is_string()) {
    AddError(diags, "wrong_type",
             "description must be a string, not " + ValueTypeNoun(doc["description"]),
             at("description"));
  }
  if (doc.contains("default")) {
    const Value& d = doc["default"];
    if (!ok) {
      decl.value = Value();  // reported above; do not report a missing value too
    } else if (!TypeMatches(d, decl.type)) {
      decl.value = Value();
      AddError(diags, "wrong_type",
               "default of variable \"" + name + "\" must be " + VariableTypeNoun(decl.type) +
                   ", not " + ValueTypeNoun(d),
               at("default"));
    } else {
      decl.value = d;
      decl.default_location = at("default");
    }
  }
  return decl;
}

namespace {

// The strings in `v`, appended to `out`.
void CollectStrings(const Value& v, std::vector<std::string>& out) {
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_structured()) {
    for (const auto& item : v) CollectStrings(item, out);
  }
}

}  // namespace

VariableValues ResolveVariableValues(const std::map<std::string, VariableDecl>& decls,
                                     const VariableSources& sources) {
  VariableValues out;
  std::vector<Diagnostic>& diags = out.diagnostics;
  std::map<std::string, std::optional<Value>> value;
  std::map<std::string, ValueOrigin>& origin = out.origins;
  std::vector<std::string> names;
  for (const auto& [name, decl] : decls) {
    value[name] = decl.value;
    if (decl.value) origin[name] = {"its default", decl.default_location};
    names.push_back(name);
    if (decl.sensitive && decl.value) CollectStrings(*decl.value, out.secrets);
  }
  auto sensitive = [&](const std::string& name) {
    auto decl = decls.find(name);
    return decl != decls.end() && decl->second.sensitive;
  };

  // CAIRN_VAR_<name>
  std::map<std::string, Value> from_env;  // to tell when a saved plan's value wins
  for (const auto& [name, decl] : decls) {
    const char* env = sources.getenv ? sources.getenv(("CAIRN_VAR_" + name).c_str()) : nullptr;
    if (!env) continue;
    if (decl.sensitive) out.secrets.push_back(env);
    if (auto v = ParseVariableText(env, decl.type)) {
      value[name] = *v;
      from_env.emplace(name, *v);
      origin[name] = {"CAIRN_VAR_" + name, decl.location};
    } else {
      AddError(diags, "invalid_variable_value",
               "CAIRN_VAR_" + name + " is not " + VariableTypeNoun(decl.type) + " as variable \"" +
                   name + "\" requires",
               decl.location);
    }
  }
  // --var-file, in order.
  for (const VariableFileEntry& e : sources.file_entries) {
    if (sensitive(e.name)) CollectStrings(e.value, out.secrets);
    auto decl = decls.find(e.name);
    if (decl == decls.end()) {
      AddWarning(diags, "unknown_variable",
                 "variable file sets undeclared variable \"" + e.name + "\"", e.name_location,
                 DidYouMean(e.name, names));
      continue;
    }
    if (!TypeMatches(e.value, decl->second.type)) {
      AddError(diags, "invalid_variable_value",
               "value of variable \"" + e.name + "\" must be " +
                   VariableTypeNoun(decl->second.type) + ", not " + ValueTypeNoun(e.value),
               e.value_location);
      continue;
    }
    value[e.name] = e.value;
    origin[e.name] = {"the --var-file " + e.value_location.file, e.value_location};
  }
  // --var name=value
  for (const auto& [name, text] : sources.vars) {
    if (sensitive(name)) out.secrets.push_back(text);
    auto decl = decls.find(name);
    if (decl == decls.end()) {
      AddError(diags, "unknown_variable", "--var sets undeclared variable \"" + name + "\"", {},
               DidYouMean(name, names));
      continue;
    }
    if (auto v = ParseVariableText(text, decl->second.type)) {
      value[name] = *v;
      origin[name] = {"--var " + name, decl->second.location};
    } else {
      AddError(diags, "invalid_variable_value",
               "--var " + name + " is not " + VariableTypeNoun(decl->second.type) +
                   " as variable \"" + name + "\" requires",
               {});
    }
  }
  for (const auto& [name, v] : sources.plan_vars) {
    if (sensitive(name)) CollectStrings(v, out.secrets);
    auto decl = decls.find(name);
    if (decl != decls.end() && TypeMatches(v, decl->second.type)) {
      value[name] = v;
      origin[name] = {"the saved plan", decl->second.location};
      // The environment is not refused like --var (it may be set for
      // every command), but a value it would have changed is named.
      auto env = from_env.find(name);
      if (env != from_env.end() && env->second != v) {
        AddWarning(diags, "variable_not_used",
                   "CAIRN_VAR_" + name +
                       " is not used: the saved plan is applied with the value of "
                       "variable \"" +
                       name + "\" it was made with",
                   {}, "make a new plan to use the environment's value");
      }
    } else {
      AddWarning(diags, "unknown_variable",
                 "the saved plan's value for variable \"" + name +
                     "\" is not used: the stack no longer declares it, or not with that type",
                 {});
    }
  }
  for (const auto& [name, decl] : decls) {
    const std::optional<Value>& v = value[name];
    if (!v) {
      if (sources.settings_only) continue;  // an error only where it is used
      AddError(diags, "missing_variable", "variable \"" + name + "\" has no value", decl.location,
               "give it a default, or set it with --var " + name +
                   "=VALUE, a --var-file or CAIRN_VAR_" + name);
      continue;
    }
    out.values[name] = *v;
    if (decl.sensitive) out.sensitive.push_back(name);
  }
  return out;
}

}  // namespace cairn
