#include "engine/manifest/variable_validations.h"

#include "base/schema/suggest.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

void CheckVariableValidations(const ValidatedVariable& variable,
                              const ValidationEvaluator& evaluate, std::vector<Diagnostic>& diags) {
  const ManifestDocument& doc = *variable.doc;
  const std::string& name = variable.name;
  if (!doc.value.contains("validation")) return;
  const Value& list = doc.value["validation"];
  YamlNode node = ChildNode(doc.node, "validation");
  if (!list.is_array()) {
    AddError(diags, "wrong_type",
             "validation must be a list of {condition, error_message}, not " + ValueTypeNoun(list),
             NodeLoc(doc.file, node));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const Value& item = list[i];
    YamlNode inode = node.IsSequence() && i < node.size() ? node[i] : node;
    if (!item.is_object() || !item.contains("condition") || !item.contains("error_message")) {
      AddError(diags, "missing_field",
               "a validation needs condition and error_message, e.g. {condition: ${var." + name +
                   " != \"\"}, error_message: ...}",
               NodeLoc(doc.file, inode));
      continue;
    }
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (it.key() != "condition" && it.key() != "error_message")
        AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in a validation",
                 KeyLoc(doc.file, inode, it.key()),
                 DidYouMean(it.key(), {"condition", "error_message"}));
    }
    if (!variable.has_value) continue;  // its absence is reported already
    YamlNode cnode = ChildNode(inode, "condition");
    ValidationField c = evaluate(item["condition"], cnode, "a validation condition");
    if (c.failed || HoldsExpressions(c.value)) continue;  // reported, or known later
    if (!c.value.is_boolean()) {
      AddError(diags, "invalid_condition",
               "a condition must be true or false, not " + ValueTypeNoun(c.value),
               NodeLoc(doc.file, cnode));
      continue;
    }
    if (c.value.get<bool>()) continue;
    ValidationField message =
        evaluate(item["error_message"], ChildNode(inode, "error_message"), "an error message");
    std::string text = message.value.is_string() && !HoldsExpressions(message.value)
                           ? FromExpressionForm(message.value).as_string()
                           : "(the error message could not be evaluated)";
    if (message.sensitive) text = "(the error message holds a sensitive value)";
    const ValueOrigin* origin = variable.origin;
    // A sensitive default is never quoted: its variable's name is pointed
    // at instead.
    const bool quoted_default = origin && origin->what == "its default" && variable.sensitive;
    SourceLocation at = origin && !origin->location.file.empty() && !quoted_default
                            ? origin->location
                            : variable.location;
    AddError(diags, "invalid_variable_value",
             "invalid value for variable \"" + name + "\"" +
                 (variable.module.empty() ? "" : " of module " + variable.module) + ": " + text,
             at,
             "the value (from " + (origin ? origin->what : "its source") +
                 ") fails the validation at " + LocationText(NodeLoc(doc.file, cnode)));
  }
}

}  // namespace cairn
