#include "server/customer_status.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

namespace customer_status_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;

TEST_CASE("customerStatus on create is exactly what spec 2.3 shows") {
  nlohmann::json j;
  CustomerStatusToJson(ProjectCustomerStatus("queued", "create", true), &j);
  CHECK(j == nlohmann::json::parse(R"({
    "status": "pending", "reasonCode": "provisioning_pending", "severity": "info",
    "actionability": "wait", "guidance": "wait",
    "operation": {"type": "create", "state": "queued"},
    "actions": {"edit": true, "delete": true, "start": false, "stop": false, "reboot": false,
                "snapshot": false, "firewall": false, "reverseDns": false}})"));
}

TEST_CASE("every raw status projects to one of the ten customer states, and all ten occur") {
  const std::set<std::string> ten = {"pending",     "provisioning", "retrying", "running",
                                     "stopped",     "deleting",     "failed",   "delayed",
                                     "reconciling", "deleted"};
  std::set<std::string> seen;
  for (auto raw : kRawStatuses) {
    CustomerStatus s = ProjectCustomerStatus(raw, "create", true);
    INFO(raw);
    CHECK(ten.count(s.status) == 1);
    CHECK_FALSE(s.reason_code.empty());
    seen.insert(s.status);
  }
  CHECK(seen == ten);
}

TEST_CASE("action flags follow the state") {
  auto running = ProjectCustomerStatus("running", "create", true);
  CHECK(running.actions.stop);
  CHECK(running.actions.reboot);
  CHECK_FALSE(running.actions.start);
  CHECK(running.operation_type == "create");
  CHECK(running.operation_state == "completed");
  auto stopped = ProjectCustomerStatus("stopped", "stop", true);
  CHECK(stopped.actions.start);
  CHECK_FALSE(stopped.actions.stop);
  CHECK(stopped.operation_type == "stop");
  auto deleting = ProjectCustomerStatus("deleting", "delete", true);
  CHECK_FALSE(deleting.actions.del);
  CHECK_FALSE(deleting.actions.edit);
  auto failed = ProjectCustomerStatus("failed", "create", true);
  CHECK(failed.severity == "error");
  CHECK(failed.actions.del);
  CHECK_FALSE(failed.actions.edit);
  auto reconciling = ProjectCustomerStatus("reconciling", "create", true);
  CHECK_FALSE(reconciling.actions.del);
  // Networks and volumes never offer compute actions.
  auto net = ProjectCustomerStatus("running", "create", false);
  CHECK(net.actions.edit);
  CHECK_FALSE(net.actions.stop);
  CHECK_FALSE(net.actions.snapshot);
}

TEST_CASE("the preview status reads provisioning for a queued record") {
  CHECK(PreviewStatus("queued") == "provisioning");
  CHECK(PreviewStatus("running") == "running");
  CHECK(PreviewStatus("stopping") == "running");
  CHECK(PreviewStatus("failed") == "failed");
}

}  // namespace customer_status_test
