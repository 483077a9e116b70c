#include "engine/manifest/declared_instances.h"

#include <algorithm>
#include <optional>

#include "engine/manifest/expr.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

// `enabled` (OpenTofu's): one instance without an index when true, none
// when false; in the place of count and for_each, never beside them.
bool DeclaredEnabled(const ManifestDocument& doc, const std::string& what,
                     const InstanceEvaluator& evaluate, Instances& out,
                     std::vector<Diagnostic>& diags) {
  out = Instances();
  YamlNode node = ChildNode(doc.node, "enabled");
  if (doc.value.contains("count") || doc.value.contains("for_each")) {
    AddError(diags, "count_and_for_each",
             "a " + what + " takes enabled, count or for_each, not more than one",
             KeyLoc(doc.file, doc.node, "enabled"),
             "enabled: false is no instance, true one without an index");
    return false;
  }
  InstanceField field = evaluate(doc, "enabled");
  if (field.failed) return false;
  const Value& v = field.value;
  if (HoldsExpressions(v)) {
    AddError(diags, "unknown_enabled",
             "enabled must be known when the stack is loaded, but it depends on a value known "
             "only after apply",
             NodeLoc(doc.file, node), "build it from variables, locals and literals");
    return false;
  }
  if (!v.is_boolean()) {
    AddError(diags, "invalid_enabled", "enabled must be true or false, not " + ValueTypeNoun(v),
             NodeLoc(doc.file, node));
    return false;
  }
  if (v.get<bool>()) out.indexes.emplace_back(std::monostate{});
  return true;
}

}  // namespace

bool DeclaredInstances(const ManifestDocument& doc, const std::string& what,
                       const InstanceEvaluator& evaluate, Instances& out,
                       std::vector<Diagnostic>& diags) {
  if (doc.value.contains("enabled")) return DeclaredEnabled(doc, what, evaluate, out, diags);
  if (!doc.value.contains("count") && !doc.value.contains("for_each")) {
    return ExpandInstances(what, nullptr, nullptr, {}, out, diags);
  }
  std::optional<Value> count, for_each;
  const bool both = doc.value.contains("count") && doc.value.contains("for_each");
  bool failed = false;
  for (const char* key : {"count", "for_each"}) {
    if (!doc.value.contains(key)) continue;
    Value v = doc.value[key];
    if (v.is_string() && !both) {
      InstanceField field = evaluate(doc, key);
      v = std::move(field.value);
      failed = failed || field.failed;
      if (!failed && HoldsExpressions(v)) {
        // Known only after apply: it reads a resource through a local or
        // a module's input.
        std::vector<std::string> names;
        for (const std::string& name : field.references) {
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
        AddError(diags, "unknown_" + std::string(key),
                 std::string(key) + " must be known when the stack is loaded, but it depends on " +
                     (names.empty() ? "a value known only after apply" : JoinNames(names)),
                 NodeLoc(doc.file, ChildNode(doc.node, key)),
                 "count and for_each decide which instances exist; build them from variables, "
                 "locals and literals, not from resource attributes");
        failed = true;
      }
    }
    (key == std::string("count") ? count : for_each) = std::move(v);
  }
  YamlNode each_node = ChildNode(doc.node, "for_each");
  ExpansionLocations at;
  at.count = NodeLoc(doc.file, ChildNode(doc.node, "count"));
  at.for_each = NodeLoc(doc.file, each_node);
  at.for_each_key = KeyLoc(doc.file, doc.node, "for_each");
  at.for_each_item = [&](size_t i) {
    return NodeLoc(doc.file,
                   each_node.IsSequence() && i < each_node.size() ? each_node[i] : each_node);
  };
  if (failed) {
    // Reported where it was evaluated; the mode still stands.
    out = Instances();
    out.mode = count ? Instances::Mode::kCount : Instances::Mode::kForEach;
    return false;
  }
  return ExpandInstances(what, count ? &*count : nullptr, for_each ? &*for_each : nullptr, at, out,
                         diags);
}

}  // namespace cairn
