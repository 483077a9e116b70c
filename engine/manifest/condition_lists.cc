#include "engine/manifest/condition_lists.h"

#include "base/schema/suggest.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

std::vector<ConditionConfig> LoadConditionList(const ManifestDocument& doc, const Value& list,
                                               const YamlNode& node, const std::string& key,
                                               const ConditionEvaluator& evaluate,
                                               std::vector<Diagnostic>& diags) {
  std::vector<ConditionConfig> out;
  if (!list.is_array()) {
    AddError(diags, "wrong_type",
             key + " must be a list of {condition, error_message}, not " + ValueTypeNoun(list),
             NodeLoc(doc.file, node));
    return out;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const Value& item = list[i];
    YamlNode inode = node.IsSequence() && i < node.size() ? node[i] : node;
    if (!item.is_object() || !item.contains("condition") || !item.contains("error_message")) {
      AddError(diags, "missing_field", "each " + key + " needs condition and error_message",
               NodeLoc(doc.file, inode));
      continue;
    }
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (it.key() != "condition" && it.key() != "error_message")
        AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in " + key,
                 KeyLoc(doc.file, inode, it.key()),
                 DidYouMean(it.key(), {"condition", "error_message"}));
    }
    ConditionConfig c;
    c.location = NodeLoc(doc.file, ChildNode(inode, "condition"));
    EvaluatedCondition e = evaluate(item, inode);
    if (e.failed) continue;
    c.condition = std::move(e.condition);
    c.error_message = e.message_sensitive ? Value("(the error message holds a sensitive value)")
                                          : std::move(e.error_message);
    if (!HoldsExpressions(c.condition) && !c.condition.is_boolean()) {
      AddError(diags, "invalid_condition",
               "a condition must be true or false, not " + ValueTypeNoun(c.condition), c.location);
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cairn
