#include "engine/report/drift_report.h"

#include "base/redact.h"
#include "engine/report/plan_report.h"

namespace cairn {
namespace {

struct DriftCounts {
  int changed = 0, deleted = 0, unmanaged = 0, failed = 0, ignored = 0;
};

// A block per item, counted in `n`.
std::string RenderItems(const DriftReport& report, bool color, DriftCounts& n) {
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  auto field_line = [](const AttributeChange& c, const char* note) {
    return "      ~ " + c.field + ": " + RenderValue(c.before, {}) + " -> " +
           RenderValue(c.after, {}) + note + "\n";
  };
  for (const auto& item : report.items) {
    switch (item.type) {
      case DriftItem::Type::kChanged:
        if (item.changes.empty()) {
          out += std::string(color ? "\033[2m" : "") + "  ~ " + item.address +
                 "   changed outside Cairn, ignored by lifecycle.ignore_changes (" + item.id + ")" +
                 reset + "\n";
        } else {
          ++n.changed;
          out += std::string(color ? "\033[33m" : "") + "  ~ " + reset + item.address +
                 "   changed outside Cairn (" + item.id + ")\n";
        }
        for (const auto& c : item.changes) out += field_line(c, "");
        for (const auto& c : item.ignored) {
          ++n.ignored;
          out += field_line(c, "   # ignored: lifecycle.ignore_changes");
        }
        break;
      case DriftItem::Type::kDeleted:
        ++n.deleted;
        out += std::string(color ? "\033[31m" : "") + "  - " + reset + item.address +
               "   deleted outside Cairn (" + item.id + ")\n";
        break;
      case DriftItem::Type::kFailed:
        ++n.failed;
        out += std::string(color ? "\033[31m" : "") + "  ! " + reset + item.address +
               "   failed: the API reports status failed (" + item.id + ")" +
               (item.reason.empty() ? "" : "; state: " + item.reason) +
               "; the next apply replaces it\n";
        break;
      case DriftItem::Type::kUnmanaged:
        ++n.unmanaged;
        out += std::string(color ? "\033[36m" : "") + "  ? " + reset + item.kind + " " + item.id +
               (item.name.empty() ? "" : " \"" + item.name + "\"") +
               "   not managed by this stack\n";
        break;
    }
  }
  return out;
}

}  // namespace

std::string RenderDriftText(const DriftReport& report, bool color) {
  DriftCounts n;
  std::string out = RenderItems(report, color, n);
  const int ignored = n.ignored;
  const std::string ignored_text =
      std::to_string(ignored) + (ignored == 1 ? " field" : " fields") +
      " that lifecycle.ignore_changes ignores (not counted; 'cairn apply --refresh-only' "
      "records the live values in the state)";
  if (!report.has_drift()) {
    out += ignored == 0
               ? "No drift. The live resources match the state.\n"
               : "No drift. The live resources match the state but for " + ignored_text + ".\n";
  } else {
    out += "Drift: " + std::to_string(n.changed) + " changed, " + std::to_string(n.deleted) +
           " deleted, " + std::to_string(n.failed) + " failed, " + std::to_string(n.unmanaged) +
           " unmanaged" + (ignored == 0 ? "" : "; and " + ignored_text) + ".\n";
  }
  return Redact(out);
}

std::string RenderRefreshOnlyText(const DriftReport& report, const StateCommit& commit,
                                  bool color) {
  DriftCounts n;
  std::string out = RenderItems(report, color, n);
  if (commit.put.empty() && commit.remove.empty()) {
    return Redact(out + "No changes. The state holds the live values.\n");
  }
  out += "\nRefresh only: " + std::to_string(commit.put.size()) +
         " to record with their live values, " + std::to_string(commit.remove.size()) +
         " to remove from the state (deleted outside Cairn). Nothing is changed in the API.\n";
  return Redact(out);
}

Value DriftToJson(const DriftReport& report) {
  Value items = Value::array();
  for (const auto& item : report.items) {
    auto fields = [](const std::vector<AttributeChange>& list) {
      Value out = Value::array();
      for (const auto& c : list) {
        out.push_back({{"field", c.field}, {"state", c.before}, {"live", c.after}});
      }
      return out;
    };
    // A changed item with only ignored differences is no drift: its own type.
    const char* type = item.counts() ? DriftTypeName(item.type) : "ignored";
    Value j = {
        {"type", type}, {"kind", item.kind}, {"id", item.id}, {"changes", fields(item.changes)}};
    if (!item.ignored.empty()) j["ignored"] = fields(item.ignored);
    if (!item.address.empty()) j["address"] = item.address;
    if (!item.name.empty()) j["name"] = item.name;
    if (item.type == DriftItem::Type::kFailed) j["status"] = "failed";
    if (!item.reason.empty()) j["reason"] = item.reason;
    items.push_back(std::move(j));
  }
  return {{"format_version", DriftReport::kFormatVersion},
          {"drift", report.has_drift()},
          {"items", items}};
}

}  // namespace cairn
