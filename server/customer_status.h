// The customerStatus projection (spec 2.3 and 3): a pure function from a
// record's raw lifecycle status (and the type of its last operation) to what
// a customer is shown. It is recomputed on every response and never holds
// internal ids, worker details, raw errors or credentials. The full table is
// written down in docs/api.md; tests/server/customer_status_test.cc pins it.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::server {

// Raw statuses the lifecycle worker moves records through.
inline constexpr std::string_view kRawStatuses[] = {
    "queued",  "provisioning", "retrying",  "delayed",  "running", "reconciling", "stopping",
    "stopped", "starting",     "rebooting", "deleting", "deleted", "failed"};

struct CustomerActions {
  bool edit = false, del = false, start = false, stop = false, reboot = false, snapshot = false,
       firewall = false, reverse_dns = false;
};

struct CustomerStatus {
  std::string status;         // one of the ten customer states of spec 3
  std::string reason_code;    // provider-neutral
  std::string severity;       // info | warning | error
  std::string actionability;  // wait | none | optional | required
  std::string guidance;
  std::string operation_type;   // create | start | stop | reboot | delete | reconcile
  std::string operation_state;  // queued | in_progress | retrying | delayed | completed | failed
  CustomerActions actions;
};

// `compute_actions` is true for instances: start/stop/reboot/snapshot/
// firewall/reverseDns are offered only on compute; networks and volumes
// only ever offer edit and delete. `last_op` is the type of the operation
// that produced a stable state (create, start, stop, reboot, update).
// An unknown raw status projects to failed/internal_state (never expected).
CustomerStatus ProjectCustomerStatus(std::string_view raw_status, std::string_view last_op,
                                     bool compute_actions);

// The status field of the preview API: the customer state, except that
// pending reads "provisioning" (spec 2.2: create returns provisioning).
std::string PreviewStatus(std::string_view raw_status);

// The JSON object of spec 2.3.
void CustomerStatusToJson(const CustomerStatus& s, nlohmann::json* out);

}  // namespace cairn::server
