// What `cairn watch` says between two runs of a stack: the events, the
// status, and the status document's part of a run.
#include "engine/watch/watch_status.h"

#include <catch2/catch.hpp>

namespace watch_status_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const WatchedStackInfo kWeb{"web", "/srv/web", "default"};

StackRunRecord Clean() {
  StackRunRecord r;
  r.started_ms = 1'700'000'000'000;
  r.finished_ms = 1'700'000'000'250;
  r.requests = 2;
  r.resources = {{"network.core", "network", "net-1"}, {"instance.web", "instance", "i-1"}};
  r.checks = {{"reachable", CheckResult::Status::kPassed, {}}};
  return r;
}

StackRunRecord Drifted(const std::string& address = "instance.web") {
  StackRunRecord r = Clean();
  DriftItem item;
  item.type = DriftItem::Type::kChanged;
  item.address = address;
  item.kind = "instance";
  item.id = "i-1";
  item.changes = {{"plan", "s-1vcpu-1gb", "s-2vcpu-4gb", false}};
  r.drift.items.push_back(item);
  return r;
}

std::vector<std::string> Types(const std::vector<Value>& events) {
  std::vector<std::string> out;
  for (const Value& e : events) out.push_back(e.at("event").get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("drift is detected once and resolved once") {
  const StackRunRecord clean = Clean(), drifted = Drifted();
  // First run, no drift: nothing to say.
  CHECK(WatchEvents(kWeb, nullptr, nullptr, clean).empty());
  // Drift appears.
  auto detected = WatchEvents(kWeb, &clean, &clean, drifted);
  REQUIRE(Types(detected) == std::vector<std::string>{"drift_detected"});
  const Value& e = detected[0];
  CHECK(e["stack"] == "web");
  CHECK(e["dir"] == "/srv/web");
  CHECK(e["workspace"] == "default");
  CHECK(e["at"] == "2023-11-14T22:13:20Z");
  CHECK(e["drift"]["changed"] == 1);
  REQUIRE(e["resources"].size() == 1);
  CHECK(e["resources"][0]["address"] == "instance.web");
  CHECK(e["resources"][0]["fields"] == Value::array({"plan"}));
  // The same drift again: nothing new.
  CHECK(WatchEvents(kWeb, &drifted, &drifted, drifted).empty());
  // More drift: detected again, naming only the new resource.
  StackRunRecord more = Drifted();
  more.drift.items.push_back(Drifted("network.core").drift.items[0]);
  auto again = WatchEvents(kWeb, &drifted, &drifted, more);
  REQUIRE(Types(again) == std::vector<std::string>{"drift_detected"});
  REQUIRE(again[0]["resources"].size() == 1);
  CHECK(again[0]["resources"][0]["address"] == "network.core");
  // Put back.
  CHECK(Types(WatchEvents(kWeb, &more, &more, clean)) ==
        std::vector<std::string>{"drift_resolved"});
  // First run with drift already there: detected.
  CHECK(Types(WatchEvents(kWeb, nullptr, nullptr, drifted)) ==
        std::vector<std::string>{"drift_detected"});
}

TEST_CASE("ignored differences alone are no drift event") {
  StackRunRecord ignored = Clean();
  DriftItem item;
  item.address = "instance.web";
  item.kind = "instance";
  item.ignored = {{"name", "a", "b", false}};
  ignored.drift.items.push_back(item);
  const StackRunRecord clean = Clean();
  CHECK(WatchEvents(kWeb, &clean, &clean, ignored).empty());
  CHECK(StackStatusName(ignored) == "ok");
}

TEST_CASE("a check failing and recovering are events") {
  const StackRunRecord clean = Clean();
  StackRunRecord failing = Clean();
  failing.checks[0].status = CheckResult::Status::kFailed;
  failing.checks[0].messages = {"web is unreachable"};
  auto failed = WatchEvents(kWeb, &clean, &clean, failing);
  REQUIRE(Types(failed) == std::vector<std::string>{"check_failed"});
  CHECK(failed[0]["check"] == "reachable");
  CHECK(failed[0]["messages"][0] == "web is unreachable");
  CHECK(StackStatusName(failing) == "checks_failing");
  CHECK(WatchEvents(kWeb, &failing, &failing, failing).empty());
  auto recovered = WatchEvents(kWeb, &failing, &failing, clean);
  REQUIRE(Types(recovered) == std::vector<std::string>{"check_recovered"});
  CHECK(recovered[0]["check"] == "reachable");
  // Unknown is not failing.
  StackRunRecord unknown = Clean();
  unknown.checks[0].status = CheckResult::Status::kUnknown;
  CHECK(Types(WatchEvents(kWeb, &failing, &failing, unknown)) ==
        std::vector<std::string>{"check_recovered"});
}

TEST_CASE("a failed run is one event and its recovery compares with the last good run") {
  const StackRunRecord clean = Clean(), drifted = Drifted();
  StackRunRecord failed = Clean();
  failed.error = "cannot reach the API";
  auto first = WatchEvents(kWeb, &clean, &clean, failed);
  REQUIRE(Types(first) == std::vector<std::string>{"run_failed"});
  CHECK(first[0]["error"] == "cannot reach the API");
  CHECK(StackStatusName(failed) == "error");
  // Still failing: said once.
  CHECK(WatchEvents(kWeb, &failed, &clean, failed).empty());
  // Back, with drift that appeared meanwhile.
  CHECK(Types(WatchEvents(kWeb, &failed, &clean, drifted)) ==
        std::vector<std::string>{"run_recovered", "drift_detected"});
  // Back, drift the same as before the failure: recovery alone.
  CHECK(Types(WatchEvents(kWeb, &failed, &drifted, drifted)) ==
        std::vector<std::string>{"run_recovered"});
}

TEST_CASE("a remediation refused for the same reason is said once") {
  StackRunRecord refused = Drifted();
  refused.remediation = RemediationRecord{1, "refused", "the plan would create x", 0};
  const StackRunRecord drifted = Drifted();
  CHECK(Types(WatchEvents(kWeb, &drifted, &drifted, refused)) ==
        std::vector<std::string>{"remediation_refused"});
  CHECK(WatchEvents(kWeb, &refused, &refused, refused).empty());
  StackRunRecord other = refused;
  other.remediation->reason = "policy p does not pass";
  CHECK(Types(WatchEvents(kWeb, &refused, &refused, other)) ==
        std::vector<std::string>{"remediation_refused"});
  StackRunRecord applied = Drifted();
  applied.remediation = RemediationRecord{1, "applied", "", 1};
  auto events = WatchEvents(kWeb, &drifted, &drifted, applied);
  REQUIRE(Types(events) == std::vector<std::string>{"remediation_applied"});
  CHECK(events[0]["updated"] == 1);
}

TEST_CASE("a run's status document lists every resource with its drift") {
  StackRunRecord drifted = Drifted();
  DriftItem stray;
  stray.type = DriftItem::Type::kUnmanaged;
  stray.kind = "network";
  stray.id = "net-9";
  stray.name = "stray";
  drifted.drift.items.push_back(stray);
  Value v;
  RunRecordToJson(drifted, nullptr, v);
  CHECK(v["status"] == "drifted");
  CHECK(v["last_run"]["duration_seconds"] == 0.25);
  CHECK(v["last_run"]["requests"] == 2);
  CHECK(v["last_run"]["error"] == "");
  CHECK(v["drift"] == Value{{"changed", 1}, {"deleted", 0}, {"failed", 0}, {"unmanaged", 1}});
  REQUIRE(v["resources"].size() == 2);
  const Value& web = v["resources"][1];
  CHECK(web["address"] == "instance.web");
  CHECK(web["status"] == "changed");
  CHECK(web["changes"][0] ==
        Value{{"path", "plan"}, {"recorded", "s-1vcpu-1gb"}, {"live", "s-2vcpu-4gb"}});
  CHECK(v["resources"][0]["status"] == "in_sync");
  REQUIRE(v["unmanaged"].size() == 1);
  CHECK(v["unmanaged"][0]["name"] == "stray");
  CHECK(v["checks"][0]["name"] == "reachable");

  // A failed run keeps what the last good one knew.
  StackRunRecord failed = Clean();
  failed.error = "boom";
  Value f;
  RunRecordToJson(failed, &drifted, f);
  CHECK(f["status"] == "error");
  CHECK(f["last_run"]["error"] == "boom");
  CHECK(f["drift"]["changed"] == 1);
}

}  // namespace watch_status_test
