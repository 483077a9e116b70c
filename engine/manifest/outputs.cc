#include "engine/manifest/outputs.h"

#include "engine/expr/ast.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

// The module output references left in `v` (in expression form: those
// written in it and those that came through a module's variables).
void OutputsModuleOutputRefs(const Value& v, std::vector<Expression>& out) {
  if (v.is_structured()) {
    for (const auto& item : v) OutputsModuleOutputRefs(item, out);
    return;
  }
  if (!v.is_string() || v.get_ref<const std::string&>().find("module") == std::string::npos) return;
  expr::NodePtr n = ParseExpressionForm(v.get_ref<const std::string&>());
  if (!n) return;
  for (Expression& e : ReferencesIn(*n)) {
    if (e.type == Expression::Type::kModuleOutput) out.push_back(std::move(e));
  }
}

}  // namespace

std::optional<OutputDeclaration> DeclareOutput(const ManifestDocument& doc, const std::string& key,
                                               std::map<std::string, SourceLocation>& first,
                                               std::vector<Diagnostic>& diags) {
  SourceLocation name_loc = NodeLoc(doc.file, ChildNode(doc.node, "name"));
  if (auto [it, inserted] = first.emplace(key, name_loc); !inserted) {
    AddError(diags, "duplicate_output", "output \"" + doc.name + "\" is declared twice", name_loc,
             "first declared at " + LocationText(it->second));
    return std::nullopt;
  }
  OutputDeclaration decl;
  decl.output.name = doc.name;
  decl.output.location = doc.location;
  if (!doc.value.contains("value")) {
    AddError(diags, "missing_field", "missing required field \"value\" in output document",
             doc.location);
    return std::nullopt;
  }
  if (doc.value.contains("sensitive")) {
    if (!doc.value["sensitive"].is_boolean()) {
      AddError(diags, "wrong_type",
               "sensitive must be true or false, not " + ValueTypeNoun(doc.value["sensitive"]),
               NodeLoc(doc.file, ChildNode(doc.node, "sensitive")));
      decl.valid_sensitive = false;
    } else {
      decl.output.sensitive = doc.value["sensitive"].get<bool>();
    }
  }
  return decl;
}

std::optional<CheckConfig> DeclareCheck(const ManifestDocument& doc, const std::string& name,
                                        std::map<std::string, SourceLocation>& first,
                                        std::vector<Diagnostic>& diags) {
  SourceLocation name_loc = NodeLoc(doc.file, ChildNode(doc.node, "name"));
  if (auto [it, inserted] = first.emplace(name, name_loc); !inserted) {
    AddError(diags, "duplicate_check", "check \"" + doc.name + "\" is declared twice", name_loc,
             "first declared at " + LocationText(it->second));
    return std::nullopt;
  }
  if (!doc.value.contains("assert")) {
    AddError(diags, "missing_field", "a check needs assert: a list of {condition, error_message}",
             doc.location);
    return std::nullopt;
  }
  CheckConfig check;
  check.name = name;
  check.location = name_loc;
  return check;
}

void RefuseUndeclaredSensitive(const ManifestDocument& doc, const std::string& what,
                               std::vector<Diagnostic>& diags) {
  AddError(
      diags, "output_not_sensitive",
      "output \"" + doc.name + "\" is built from " + what + ", so it must be declared sensitive",
      NodeLoc(doc.file, ChildNode(doc.node, "value")),
      "add sensitive: true to the output: cairn output, plans and apply then show it as "
      "(sensitive)");
}

void MarkOutputsOfSensitiveOutputs(std::vector<OutputConfig>& outputs,
                                   const std::vector<const ManifestDocument*>& docs,
                                   const ModuleScopes& scopes, std::vector<Diagnostic>& diags) {
  if (scopes.size() == 1) return;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].sensitive) continue;
      std::vector<Expression> refs;
      OutputsModuleOutputRefs(outputs[i].value, refs);
      for (const Expression& e : refs) {
        auto found = FindModuleScope(scopes, e.target.module);
        const size_t* t = std::get_if<size_t>(&found);
        if (!t) continue;
        auto o = scopes[*t].outputs.find(e.attr);
        if (o == scopes[*t].outputs.end() || !outputs[o->second].sensitive) continue;
        const ManifestDocument& doc = *docs[i];
        const Value& declared = doc.value.contains("sensitive") ? doc.value["sensitive"] : Value();
        if (declared.is_null() || declared.is_boolean())
          RefuseUndeclaredSensitive(doc, "sensitive output " + e.ToString(), diags);
        outputs[i].sensitive = true;
        changed = true;
        break;
      }
    }
  }
}

}  // namespace cairn
