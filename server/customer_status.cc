#include "server/customer_status.h"

#include <nlohmann/json.hpp>

namespace cairn::server {
namespace {

struct Row {
  std::string_view raw, status, reason, severity, actionability, guidance, op_type, op_state;
  // Action flags, in the order edit, delete, start, stop, reboot, snapshot, firewall, reverseDns.
  const char* actions;
};

// op_type "" means "the record's last operation".
constexpr Row kTable[] = {
    {"queued", "pending", "provisioning_pending", "info", "wait", "wait", "create", "queued",
     "ED------"},
    {"provisioning", "provisioning", "provisioning_in_progress", "info", "wait", "wait", "create",
     "in_progress", "ED------"},
    {"retrying", "retrying", "provisioning_retrying", "warning", "wait", "wait", "create",
     "retrying", "-D------"},
    {"delayed", "delayed", "provisioning_delayed", "warning", "wait", "wait", "create", "delayed",
     "ED------"},
    {"running", "running", "ready", "info", "none", "none", "", "completed", "ED-RBSFV"},
    {"reconciling", "reconciling", "reconciliation_in_progress", "warning", "wait",
     "wait_do_not_repeat", "reconcile", "in_progress", "--------"},
    {"stopping", "running", "stop_in_progress", "info", "wait", "wait", "stop", "in_progress",
     "--------"},
    {"stopped", "stopped", "stopped", "info", "optional", "start_to_resume", "", "completed",
     "EDA--SF-"},
    {"starting", "stopped", "start_in_progress", "info", "wait", "wait", "start", "in_progress",
     "--------"},
    {"rebooting", "running", "reboot_in_progress", "info", "wait", "wait", "reboot", "in_progress",
     "--------"},
    {"deleting", "deleting", "deletion_in_progress", "info", "wait", "wait", "delete",
     "in_progress", "--------"},
    {"deleted", "deleted", "deleted", "info", "none", "none", "delete", "completed", "--------"},
    {"failed", "failed", "provisioning_failed", "error", "required", "delete_and_recreate",
     "create", "failed", "-D------"},
};

}  // namespace

CustomerStatus ProjectCustomerStatus(std::string_view raw, std::string_view last_op,
                                     bool compute_actions) {
  CustomerStatus s;
  for (const Row& r : kTable) {
    if (r.raw != raw) continue;
    s.status = r.status;
    s.reason_code = r.reason;
    s.severity = r.severity;
    s.actionability = r.actionability;
    s.guidance = r.guidance;
    s.operation_type = r.op_type.empty() ? std::string(last_op.empty() ? "create" : last_op)
                                         : std::string(r.op_type);
    s.operation_state = r.op_state;
    const char* a = r.actions;
    s.actions.edit = a[0] != '-';
    s.actions.del = a[1] != '-';
    if (compute_actions) {
      s.actions.start = a[2] != '-';
      s.actions.stop = a[3] != '-';
      s.actions.reboot = a[4] != '-';
      s.actions.snapshot = a[5] != '-';
      s.actions.firewall = a[6] != '-';
      s.actions.reverse_dns = a[7] != '-';
    }
    // A running instance can be stopped and rebooted; "R" marks both.
    if (compute_actions && raw == "running") s.actions.stop = s.actions.reboot = true;
    return s;
  }
  s.status = "failed";
  s.reason_code = "internal_state";
  s.severity = "error";
  s.actionability = "required";
  s.guidance = "contact_support";
  s.operation_type = "reconcile";
  s.operation_state = "failed";
  s.actions.del = true;
  return s;
}

std::string PreviewStatus(std::string_view raw) {
  CustomerStatus s = ProjectCustomerStatus(raw, "", false);
  return s.status == "pending" ? "provisioning" : s.status;
}

void CustomerStatusToJson(const CustomerStatus& s, nlohmann::json* out) {
  nlohmann::json& j = *out;
  j = nlohmann::json::object();
  j["status"] = s.status;
  j["reasonCode"] = s.reason_code;
  j["severity"] = s.severity;
  j["actionability"] = s.actionability;
  j["guidance"] = s.guidance;
  // Member by member: a braced list builds every pair as a value of its
  // own first, which made this most of rendering a listed instance.
  nlohmann::json& operation = j["operation"];
  operation["type"] = s.operation_type;
  operation["state"] = s.operation_state;
  nlohmann::json& actions = j["actions"];
  actions["edit"] = s.actions.edit;
  actions["delete"] = s.actions.del;
  actions["start"] = s.actions.start;
  actions["stop"] = s.actions.stop;
  actions["reboot"] = s.actions.reboot;
  actions["snapshot"] = s.actions.snapshot;
  actions["firewall"] = s.actions.firewall;
  actions["reverseDns"] = s.actions.reverse_dns;
}

}  // namespace cairn::server
