#include "engine/watch/watch_status.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/state/state_lock.h"

namespace cairn {
namespace {

// The drifted items of a run, each by a key that names it across runs.
std::map<std::string, const DriftItem*> WatchDriftedByKey(const StackRunRecord& run) {
  std::map<std::string, const DriftItem*> out;
  for (const DriftItem& item : run.drift.items) {
    if (!item.counts()) continue;
    out[item.address.empty() ? item.kind + "/" + item.id : item.address] = &item;
  }
  return out;
}

std::map<std::string, const CheckResult*> WatchFailingChecks(const StackRunRecord& run) {
  std::map<std::string, const CheckResult*> out;
  for (const CheckResult& c : run.checks) {
    if (c.status == CheckResult::Status::kFailed) out[c.name] = &c;
  }
  return out;
}

Value WatchDriftCounts(const StackRunRecord& run) {
  return Value{{"changed", run.Drifted(DriftItem::Type::kChanged)},
               {"deleted", run.Drifted(DriftItem::Type::kDeleted)},
               {"failed", run.Drifted(DriftItem::Type::kFailed)},
               {"unmanaged", run.Drifted(DriftItem::Type::kUnmanaged)}};
}

}  // namespace

int StackRunRecord::Drifted(DriftItem::Type type) const {
  return static_cast<int>(std::count_if(drift.items.begin(), drift.items.end(), [&](const auto& i) {
    return i.type == type && i.counts();
  }));
}

int StackRunRecord::FailingChecks() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const CheckResult& c) {
    return c.status == CheckResult::Status::kFailed;
  }));
}

std::string StackStatusName(const StackRunRecord& run) {
  if (run.failed()) return "error";
  if (run.drift.has_drift()) return "drifted";
  if (run.FailingChecks() > 0) return "checks_failing";
  return "ok";
}

std::string WatchTime(int64_t unix_ms) { return FormatIsoTime(unix_ms / 1000); }

std::vector<Value> WatchEvents(const WatchedStackInfo& stack, const StackRunRecord* previous,
                               const StackRunRecord* last_ok, const StackRunRecord& now) {
  std::vector<Value> out;
  auto event = [&](const char* type) -> Value& {
    out.push_back(Value{{"event", type},
                        {"at", WatchTime(now.finished_ms)},
                        {"stack", stack.name},
                        {"dir", stack.dir},
                        {"workspace", stack.workspace}});
    return out.back();
  };
  if (now.failed()) {
    if (previous == nullptr || !previous->failed()) event("run_failed")["error"] = now.error;
    return out;
  }
  if (previous != nullptr && previous->failed()) event("run_recovered");
  const auto before =
      last_ok ? WatchDriftedByKey(*last_ok) : std::map<std::string, const DriftItem*>{};
  const auto after = WatchDriftedByKey(now);
  Value fresh = Value::array();
  for (const auto& [key, item] : after) {
    if (before.count(key)) continue;
    Value r{{"type", DriftTypeName(item->type)}, {"kind", item->kind}, {"id", item->id}};
    if (!item->address.empty()) r["address"] = item->address;
    if (!item->name.empty()) r["name"] = item->name;
    Value fields = Value::array();
    for (const AttributeChange& c : item->changes) fields.push_back(c.field);
    if (!fields.empty()) r["fields"] = std::move(fields);
    fresh.push_back(std::move(r));
  }
  if (!fresh.empty()) {
    Value& e = event("drift_detected");
    e["drift"] = WatchDriftCounts(now);
    e["resources"] = std::move(fresh);
  } else if (after.empty() && !before.empty()) {
    Value& e = event("drift_resolved");
    Value was = Value::array();
    for (const auto& [key, item] : before) was.push_back(key);
    e["resources"] = std::move(was);
  }
  const auto failing_before =
      last_ok ? WatchFailingChecks(*last_ok) : std::map<std::string, const CheckResult*>{};
  const auto failing_now = WatchFailingChecks(now);
  for (const auto& [name, check] : failing_now) {
    if (failing_before.count(name)) continue;
    Value& e = event("check_failed");
    e["check"] = name;
    e["messages"] = check->messages;
  }
  for (const auto& [name, check] : failing_before) {
    if (failing_now.count(name)) continue;
    event("check_recovered")["check"] = name;
  }
  if (now.remediation) {
    // A refusal repeated for the same reason run after run is said once.
    const RemediationRecord& r = *now.remediation;
    const bool repeated = r.result == "refused" && previous != nullptr && previous->remediation &&
                          previous->remediation->result == r.result &&
                          previous->remediation->reason == r.reason;
    if (!repeated) {
      Value& e = event(r.result == "applied"   ? "remediation_applied"
                       : r.result == "refused" ? "remediation_refused"
                                               : "remediation_failed");
      if (!r.reason.empty()) e["reason"] = r.reason;
      if (r.result == "applied") e["updated"] = r.updated;
    }
  }
  return out;
}

void RunRecordToJson(const StackRunRecord& now, const StackRunRecord* last_ok, Value& out) {
  out["status"] = StackStatusName(now);
  out["last_run"] = Value{{"started_at", WatchTime(now.started_ms)},
                          {"finished_at", WatchTime(now.finished_ms)},
                          {"duration_seconds", (now.finished_ms - now.started_ms) / 1000.0},
                          {"requests", now.requests},
                          {"error", now.error}};
  const StackRunRecord* known = now.failed() ? last_ok : &now;
  if (known == nullptr) {
    out["drift"] = Value{{"changed", 0}, {"deleted", 0}, {"failed", 0}, {"unmanaged", 0}};
    out["checks"] = Value::array();
    out["resources"] = Value::array();
    out["unmanaged"] = Value::array();
  } else {
    out["drift"] = WatchDriftCounts(*known);
    out["checks"] = CheckResultsToJson(known->checks);
    std::map<std::string, const DriftItem*> by_address;
    Value unmanaged = Value::array();
    for (const DriftItem& item : known->drift.items) {
      if (item.type == DriftItem::Type::kUnmanaged) {
        unmanaged.push_back(Value{{"kind", item.kind}, {"id", item.id}, {"name", item.name}});
      } else if (item.counts()) {
        by_address[item.address] = &item;
      }
    }
    Value resources = Value::array();
    for (const TrackedResource& r : known->resources) {
      Value v{{"address", r.address},      {"kind", r.kind}, {"id", r.id}, {"status", "in_sync"},
              {"changes", Value::array()}, {"reason", ""}};
      if (auto it = by_address.find(r.address); it != by_address.end()) {
        v["status"] = DriftTypeName(it->second->type);
        v["reason"] = it->second->reason;
        for (const AttributeChange& c : it->second->changes) {
          v["changes"].push_back(
              Value{{"path", c.field}, {"recorded", c.before}, {"live", c.after}});
        }
      }
      resources.push_back(std::move(v));
    }
    out["resources"] = std::move(resources);
    out["unmanaged"] = std::move(unmanaged);
  }
  // The last decision on remediation, of this run or an earlier one.
  if (now.remediation) {
    out["remediation"] = Value{{"at", WatchTime(now.remediation->at_ms)},
                               {"result", now.remediation->result},
                               {"reason", now.remediation->reason},
                               {"updated", now.remediation->updated}};
  }
}

}  // namespace cairn
