#include "engine/report/drift_report.h"

#include "base/redact.h"
#include "engine/report/plan_report.h"

namespace cairn {
namespace {

const char* TypeName(DriftItem::Type t) {
  switch (t) {
    case DriftItem::Type::kChanged:
      return "changed";
    case DriftItem::Type::kDeleted:
      return "deleted";
    case DriftItem::Type::kUnmanaged:
      return "unmanaged";
    case DriftItem::Type::kFailed:
      return "failed";
  }
  return "changed";
}

}  // namespace

std::string RenderDriftText(const DriftReport& report, bool color) {
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  int changed = 0, deleted = 0, unmanaged = 0, failed = 0;
  for (const auto& item : report.items) {
    switch (item.type) {
      case DriftItem::Type::kChanged:
        ++changed;
        out += std::string(color ? "\033[33m" : "") + "  ~ " + reset + item.address +
               "   changed outside Cairn (" + item.id + ")\n";
        for (const auto& c : item.changes) {
          out += "      ~ " + c.field + ": " + RenderValue(c.before, {}) + " -> " +
                 RenderValue(c.after, {}) + "\n";
        }
        break;
      case DriftItem::Type::kDeleted:
        ++deleted;
        out += std::string(color ? "\033[31m" : "") + "  - " + reset + item.address +
               "   deleted outside Cairn (" + item.id + ")\n";
        break;
      case DriftItem::Type::kFailed:
        ++failed;
        out += std::string(color ? "\033[31m" : "") + "  ! " + reset + item.address +
               "   failed: the API reports status failed (" + item.id + ")" +
               (item.reason.empty() ? "" : "; state: " + item.reason) +
               "; the next apply replaces it\n";
        break;
      case DriftItem::Type::kUnmanaged:
        ++unmanaged;
        out += std::string(color ? "\033[36m" : "") + "  ? " + reset + item.kind + " " + item.id +
               (item.name.empty() ? "" : " \"" + item.name + "\"") +
               "   not managed by this stack\n";
        break;
    }
  }
  if (report.items.empty()) {
    out += "No drift. The live resources match the state.\n";
  } else {
    out += "Drift: " + std::to_string(changed) + " changed, " + std::to_string(deleted) +
           " deleted, " + std::to_string(failed) + " failed, " + std::to_string(unmanaged) +
           " unmanaged.\n";
  }
  return Redact(out);
}

Value DriftToJson(const DriftReport& report) {
  Value items = Value::array();
  for (const auto& item : report.items) {
    Value changes = Value::array();
    for (const auto& c : item.changes) {
      changes.push_back({{"field", c.field}, {"state", c.before}, {"live", c.after}});
    }
    Value j = {
        {"type", TypeName(item.type)}, {"kind", item.kind}, {"id", item.id}, {"changes", changes}};
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
