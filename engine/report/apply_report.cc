#include "engine/report/apply_report.h"

#include "base/redact.h"
#include "engine/report/plan_report.h"

namespace cairn {

std::string ApplySummaryLine(const ApplySummary& s, bool destroy, bool ok, bool color) {
  std::string counts =
      destroy ? std::to_string(s.deleted) + " destroyed"
              : std::to_string(s.created) + " added, " + std::to_string(s.updated) + " changed, " +
                    std::to_string(s.replaced) + " replaced, " + std::to_string(s.deleted) +
                    " destroyed" + (s.moved ? ", " + std::to_string(s.moved) + " moved" : "");
  if (s.forgotten > 0) counts += ", " + std::to_string(s.forgotten) + " forgotten";
  if (s.imported > 0) counts = std::to_string(s.imported) + " imported, " + counts;
  if (s.recovered > 0) {
    counts += " (" + std::to_string(s.recovered) + " of them recovered from an interrupted run)";
  }
  std::string out = color ? (ok ? "\033[1;32m" : "\033[1;31m") : "";
  if (ok) {
    out += destroy ? "Destroy complete!" : "Apply complete!";
  } else {
    out += s.interrupted ? "Interrupted." : (destroy ? "Destroy failed." : "Apply failed.");
  }
  out += color ? "\033[0m" : "";
  out += " Resources: " + counts;
  if (!ok) {
    out += "; " + std::to_string(s.failed) + " failed" +
           (s.held_back ? " (" + std::to_string(s.held_back) + " held back by a precondition)"
                        : std::string()) +
           ", " + std::to_string(s.skipped) + " skipped" +
           (s.interrupted ? "; run the command again to finish" : "");
  }
  return Redact(out + ".");
}

std::string RenderApplyOutputs(const std::map<std::string, Value>& outputs,
                               const std::set<std::string>& sensitive) {
  if (outputs.empty()) return "";
  std::string out = "\nOutputs:\n";
  for (const auto& [name, value] : outputs) {
    out += "  " + name + " = " +
           (sensitive.count(name) ? std::string("(sensitive)") : Redact(RenderValue(value, {}))) +
           "\n";
  }
  return out;
}

std::set<std::string> SensitiveOutputs(const StackConfig& config) {
  std::set<std::string> sensitive;
  for (const auto& o : config.outputs) {
    if (o.sensitive) sensitive.insert(o.name);
  }
  return sensitive;
}

Value ApplySummaryToJson(const ApplyResult& result, const std::set<std::string>& sensitive) {
  const ApplySummary& s = result.summary;
  Value outputs = Value::object();
  for (const auto& [name, value] : result.outputs) {
    outputs[name] = sensitive.count(name) ? Value("(sensitive)") : value;
  }
  return {{"event", "summary"},     {"ok", result.ok()},
          {"added", s.created},     {"changed", s.updated},
          {"replaced", s.replaced}, {"destroyed", s.deleted},
          {"moved", s.moved},       {"forgotten", s.forgotten},
          {"imported", s.imported}, {"recovered", s.recovered},
          {"failed", s.failed},     {"held_back", s.held_back},
          {"skipped", s.skipped},   {"interrupted", s.interrupted},
          {"outputs", outputs},     {"checks", CheckResultsToJson(result.checks)}};
}

}  // namespace cairn
