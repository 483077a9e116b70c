#include "engine/report/plan_report.h"

#include <algorithm>

#include "base/redact.h"

namespace cairn {
namespace {

struct Style {
  const char* symbol;
  const char* verb;
  const char* color;
};

Style StyleFor(const PlannedChange& c) {
  switch (c.action) {
    case Action::kCreate:
      return {"  +", "create", "\033[32m"};
    case Action::kUpdate:
      return {"  ~", "update in-place", "\033[33m"};
    case Action::kReplace:
      return {c.CreatesBeforeDeleting() ? "+/-" : "-/+", "replace", "\033[35m"};
    case Action::kDelete:
      return {"  -", "delete", "\033[31m"};
    case Action::kNoOp:
      return {"   ", "no-op", ""};
  }
  return {"   ", "", ""};
}

}  // namespace

void PrepareForReading(Plan& plan) {
  plan.variables.clear();
  for (auto& o : plan.outputs) {
    if (o.sensitive) o.value = "(sensitive)";
  }
}

Value MaskSensitive(const Value& v, const std::vector<std::string>& sensitive) {
  if (IsUnknown(v)) return v;
  if (v.is_string()) {
    for (const auto& s : sensitive) {
      if (!s.empty() && v.get<std::string>().find(s) != std::string::npos) return "(sensitive)";
    }
    return v;
  }
  if (v.is_structured()) {
    Value out = v;
    for (auto& item : out) item = MaskSensitive(item, sensitive);
    return out;
  }
  return v;
}

namespace {

std::string Dump(const Value& v) {
  if (IsUnknown(v)) return "(known after apply)";
  if (v.is_string() && v.get<std::string>() == "(sensitive)") return "(sensitive)";
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + Dump(v[i]);
    return out + "]";
  }
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, item] : v.items()) {
      out += (first ? "" : ", ") + k + ": " + Dump(item);
      first = false;
    }
    return out + "}";
  }
  return v.dump();
}

}  // namespace

std::string RenderValue(const Value& v, const std::vector<std::string>& sensitive_values) {
  return Dump(MaskSensitive(v, sensitive_values));
}

std::string PlanSummaryLine(const Plan& plan) {
  auto n = plan.counts();
  if (!plan.has_changes()) {
    return plan.destroy ? "No changes. Nothing to destroy: the state tracks no resources."
                        : "No changes. The infrastructure matches the manifests.";
  }
  // Imports first, as Terraform says them.
  return "Plan: " + (n.to_import ? std::to_string(n.to_import) + " to import, " : "") +
         std::to_string(n.add) + " to add, " + std::to_string(n.change) + " to change, " +
         std::to_string(n.replace) + " to replace, " + std::to_string(n.destroy) + " to destroy" +
         (n.move ? ", " + std::to_string(n.move) + " to move" : "") +
         (n.forget ? ", " + std::to_string(n.forget) + " to forget" : "") +
         (n.pending ? ", after " + std::to_string(n.pending) + " interrupted operation" +
                          (n.pending == 1 ? "" : "s") + " to complete"
                    : "") +
         ".";
}

std::string ChecksLine(const std::vector<CheckResult>& results, bool after_apply) {
  if (results.empty()) return "";
  int passed = 0, unknown = 0;
  std::string failed;
  int nfailed = 0;
  for (const CheckResult& r : results) {
    if (r.status == CheckResult::Status::kPassed) ++passed;
    if (r.status == CheckResult::Status::kUnknown) ++unknown;
    if (r.status == CheckResult::Status::kFailed) {
      failed += (nfailed++ ? ", " : "") + r.name;
    }
  }
  std::vector<std::string> parts;
  if (nfailed) parts.push_back(std::to_string(nfailed) + " failed (" + failed + ")");
  if (passed) parts.push_back(std::to_string(passed) + " passed");
  if (unknown) {
    parts.push_back(std::to_string(unknown) + (after_apply
                                                   ? " not decided (what they read was not made)"
                                                   : " known after apply"));
  }
  std::string out = after_apply ? "Checks after apply: " : "Checks: ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + ".";
}

std::string RenderPendingOperations(const Plan& plan, const ReportOptions& opts) {
  if (plan.pending.empty()) return "";
  const char* reset = opts.color ? "\033[0m" : "";
  size_t width = 0;
  for (const auto& p : plan.pending) width = std::max(width, p.address.size());
  std::string out =
      "Interrupted operations, which 'cairn apply' completes first (then it plans again):\n";
  for (const auto& p : plan.pending) {
    PlannedChange as_change;
    as_change.action = p.action;
    Style s = StyleFor(as_change);
    out += opts.color ? s.color : "";
    out += s.symbol;
    out += reset;
    out += " " + p.address + std::string(width - p.address.size() + 3, ' ') + ActionName(p.action) +
           (p.remote_id.empty() ? "" : " (id " + p.remote_id + ")") +
           (p.note.empty() ? "" : "  # " + p.note) + "\n";
  }
  out += "The changes below are against the state as it is before them:\n";
  return out;
}

std::string RenderPlanText(const Plan& plan, const ReportOptions& opts) {
  const char* reset = opts.color ? "\033[0m" : "";
  size_t width = 0;
  for (const auto& c : plan.changes) {
    if (c.action != Action::kNoOp || !c.moved_from.empty()) {
      width = std::max(width, c.address.size());
    }
  }
  for (const auto& f : plan.forgets) width = std::max(width, f.address.size());
  for (const auto& im : plan.imports) width = std::max(width, im.address.size());
  std::string out = RenderPendingOperations(plan, opts);
  // Forgotten first: apply drops them from the state before any operation.
  for (const auto& f : plan.forgets) {
    out += "  . " + f.address + std::string(width - f.address.size() + 3, ' ') +
           "will no longer be managed" + (f.remote_id.empty() ? "" : " (id " + f.remote_id + ")") +
           "\n      # forgotten by the state, left in place in the API\n";
  }
  // Imported next: apply records them in that same first commit, and any
  // update of theirs follows as a change.
  for (const auto& im : plan.imports) {
    out += opts.color ? "\033[36m" : "";
    out += "  <-";
    out += reset;
    out += " " + im.address + std::string(width - im.address.size() + 3, ' ') +
           "will be imported (id " + im.remote_id + ")\n";
  }
  for (const auto& c : plan.changes) {
    if (c.action == Action::kNoOp && !c.moved_from.empty()) {
      out += "  > " + c.address + std::string(width - c.address.size() + 3, ' ') + "moved from " +
             c.moved_from + "\n";
      continue;
    }
    if (c.action == Action::kNoOp) continue;
    Style s = StyleFor(c);
    std::string verb = s.verb;
    if (c.action == Action::kReplace && !c.replace_reason.empty()) {
      verb += " (" + c.replace_reason + ")";
    } else if (c.action == Action::kReplace && !c.replace_fields.empty()) {
      std::string fields;
      for (size_t i = 0; i < c.replace_fields.size(); ++i) {
        fields += (i ? ", " : "") + c.replace_fields[i];
      }
      verb +=
          " (" + fields + (c.replace_fields.size() == 1 ? " forces" : " force") + " replacement)";
    }
    if (c.CreatesBeforeDeleting()) verb += ", create before destroy";
    if (!c.moved_from.empty()) verb += ", moved from " + c.moved_from;
    out += opts.color ? s.color : "";
    out += s.symbol;
    out += reset;
    out += " " + c.address + std::string(width - c.address.size() + 3, ' ') + verb + "\n";
    for (const auto& d : c.changes) {
      out += "      ";
      if (c.action == Action::kCreate) {
        out += opts.color ? "\033[32m" : "";
        out += "+";
        out += reset;
        out += " " + d.field + ": " + RenderValue(d.after, plan.sensitive_values) + "\n";
        continue;
      }
      out += opts.color ? "\033[33m" : "";
      out += "~";
      out += reset;
      out += " " + d.field + ": " + RenderValue(d.before, plan.sensitive_values) + " -> " +
             RenderValue(d.after, plan.sensitive_values);
      if (d.forces_replacement) out += "  # forces replacement";
      out += "\n";
    }
    // Sent with the create, shown and kept nowhere.
    if (c.action == Action::kCreate || c.action == Action::kReplace) {
      for (const auto& [field, v] : c.write_only.items()) {
        out += "      ";
        out += opts.color ? "\033[32m" : "";
        out += "+";
        out += reset;
        out += " " + field + ": (write-only value)\n";
      }
    }
    if (!c.note.empty()) out += "      # " + c.note + "\n";
  }
  if (!plan.output_changes.empty()) {
    out += "Changes to outputs:\n";
    for (const auto& o : plan.output_changes) {
      auto shown = [&](const Value& v) {
        return o.sensitive ? std::string("(sensitive)") : RenderValue(v, plan.sensitive_values);
      };
      switch (o.action) {
        case Action::kCreate:
          out += "  + " + o.name + " = " + shown(o.after) + "\n";
          break;
        case Action::kDelete:
          out += "  - " + o.name + "\n";
          break;
        default:
          out += "  ~ " + o.name + ": " + shown(o.before) + " -> " + shown(o.after) + "\n";
      }
    }
  }
  out += PlanSummaryLine(plan) + "\n";
  if (!plan.check_results.empty()) out += ChecksLine(plan.check_results) + "\n";
  return Redact(out);
}

namespace {

// `text` as Markdown code inside a table cell: a `|` would end the cell
// (escaped as \|, which GitHub reads inside code spans in tables too), and
// a backtick the code span (a longer fence is used, padded with spaces).
std::string CodeCell(const std::string& text) {
  std::string escaped;
  for (char ch : text) {
    if (ch == '|') escaped += '\\';
    escaped += ch == '\n' ? ' ' : ch;
  }
  size_t longest = 0, run = 0;
  for (char ch : escaped) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  if (longest == 0) return "`" + escaped + "`";
  std::string fence(longest + 1, '`');
  return fence + " " + escaped + " " + fence;
}

}  // namespace

std::string RenderPlanMarkdown(const Plan& plan) {
  auto n = plan.counts();
  std::string out = "### Cairn plan\n\n";
  std::string checks;
  if (!plan.check_results.empty()) {
    checks = "\n| check | result |\n|---|---|\n";
    for (const CheckResult& r : plan.check_results) {
      std::string result = CheckStatusName(r.status);
      for (const std::string& m : r.messages) result += "<br>" + CodeCell(m);
      checks += "| " + CodeCell(r.name) + " | " + result + " |\n";
    }
  }
  if (!plan.has_changes()) return Redact(out + "No changes.\n" + checks);
  out += (n.to_import ? "**" + std::to_string(n.to_import) + "** to import, " : "") + "**" +
         std::to_string(n.add) + "** to add, **" + std::to_string(n.change) + "** to change, **" +
         std::to_string(n.replace) + "** to replace, **" + std::to_string(n.destroy) +
         "** to destroy" + (n.move ? ", **" + std::to_string(n.move) + "** to move" : "") +
         (n.forget ? ", **" + std::to_string(n.forget) + "** to forget" : "") +
         (n.pending ? ", after **" + std::to_string(n.pending) + "** interrupted operation" +
                          (n.pending == 1 ? "" : "s") + " to complete"
                    : "") +
         ".\n\n| action | address | details |\n|---|---|---|\n";
  for (const auto& p : plan.pending) {
    out += std::string("| ") + ActionName(p.action) + " (interrupted, completes first) | " +
           CodeCell(p.address) + " | " + (p.note.empty() ? "" : CodeCell(p.note)) + " |\n";
  }
  for (const auto& f : plan.forgets) {
    out += "| forget | " + CodeCell(f.address) + " | will no longer be managed" +
           (f.remote_id.empty() ? "" : " (id " + CodeCell(f.remote_id) + ")") + " |\n";
  }
  for (const auto& im : plan.imports) {
    out += "| import | " + CodeCell(im.address) + " | will be imported (id " +
           CodeCell(im.remote_id) + ") |\n";
  }
  for (const auto& c : plan.changes) {
    if (c.action == Action::kNoOp && c.moved_from.empty()) continue;
    std::string details;
    if (!c.moved_from.empty()) details = "moved from " + CodeCell(c.moved_from);
    for (const auto& d : c.changes) {
      if (!details.empty()) details += "<br>";
      details += CodeCell(d.field) + ": ";
      if (c.action != Action::kCreate) {
        details += CodeCell(RenderValue(d.before, plan.sensitive_values)) + " → ";
      }
      details += CodeCell(RenderValue(d.after, plan.sensitive_values));
    }
    if (c.action == Action::kReplace && !c.replace_reason.empty()) {
      details += (details.empty() ? "" : "<br>") + CodeCell(c.replace_reason);
    }
    const char* action = c.action == Action::kNoOp ? "move" : ActionName(c.action);
    out += std::string("| ") + action + " | " + CodeCell(c.address) + " | " + details + " |\n";
  }
  if (!plan.output_changes.empty()) {
    out += "\n| output | change |\n|---|---|\n";
    for (const auto& o : plan.output_changes) {
      auto shown = [&](const Value& v) {
        return CodeCell(o.sensitive ? "(sensitive)" : RenderValue(v, plan.sensitive_values));
      };
      std::string change = o.action == Action::kCreate   ? "added: " + shown(o.after)
                           : o.action == Action::kDelete ? std::string("removed")
                                                         : shown(o.before) + " → " + shown(o.after);
      out += "| " + CodeCell(o.name) + " | " + change + " |\n";
    }
  }
  out += checks;
  return Redact(out);
}

}  // namespace cairn
