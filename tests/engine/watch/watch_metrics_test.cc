// The watcher's metrics as a scraper reads them: parsed by the tests'
// strict text-format parser, with the values the runs gave them.
#include "engine/watch/watch_metrics.h"

#include <catch2/catch.hpp>

#include "tests/support/prometheus_text.h"

namespace watch_metrics_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

namespace {

StackRunRecord Run(int changed_instances, int deleted_networks, int failing_checks) {
  StackRunRecord r;
  r.started_ms = 1'700'000'000'000;
  r.finished_ms = 1'700'000'001'500;
  r.requests = 3;
  for (int i = 0; i < changed_instances; ++i) {
    DriftItem item;
    item.address = "instance.web[" + std::to_string(i) + "]";
    item.kind = "instance";
    item.changes = {{"name", "a", "b", false}};
    r.drift.items.push_back(item);
  }
  for (int i = 0; i < deleted_networks; ++i) {
    DriftItem item;
    item.type = DriftItem::Type::kDeleted;
    item.address = "network.n" + std::to_string(i);
    item.kind = "network";
    r.drift.items.push_back(item);
  }
  for (int i = 0; i < failing_checks; ++i) {
    r.checks.push_back({"c" + std::to_string(i), CheckResult::Status::kFailed, {"no"}});
  }
  return r;
}

std::vector<MetricFamily> Parse(WatchMetrics& m, const WebhookTotals* webhook = nullptr) {
  const std::string text = m.Render(webhook);
  auto parsed = ParsePrometheusText(text);
  INFO(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

double Value(const std::vector<MetricFamily>& f, const std::string& name,
             const PrometheusLabels& labels) {
  const Sample* s = FindSample(f, name, labels);
  INFO(name);
  REQUIRE(s != nullptr);
  return s->value;
}

}  // namespace

TEST_CASE("watch metrics count runs and show the last run's drift and checks") {
  WatchMetrics m;
  const WatchedStackInfo web{"web", "/srv/web", "default"};
  m.RecordRole(web, true);
  m.RecordRun(web, Run(2, 1, 1));
  auto f = Parse(m);
  CHECK(Value(f, "cairn_watch_up", {}) == 1);
  CHECK(FindFamily(f, "cairn_watch_runs_total")->type == "counter");
  CHECK(FindFamily(f, "cairn_watch_drifted_resources")->type == "gauge");
  CHECK(Value(f, "cairn_watch_runs_total", {{"stack", "web"}}) == 1);
  CHECK(Value(f, "cairn_watch_api_requests_total", {{"stack", "web"}}) == 3);
  CHECK(Value(f, "cairn_watch_last_run_timestamp_seconds", {{"stack", "web"}}) == 1700000001.5);
  CHECK(Value(f, "cairn_watch_last_run_duration_seconds", {{"stack", "web"}}) == 1.5);
  CHECK(Value(f, "cairn_watch_drifted_resources",
              {{"stack", "web"}, {"kind", "instance"}, {"type", "changed"}}) == 2);
  CHECK(Value(f, "cairn_watch_drifted_resources",
              {{"stack", "web"}, {"kind", "network"}, {"type", "deleted"}}) == 1);
  CHECK(Value(f, "cairn_watch_failing_checks", {{"stack", "web"}}) == 1);
  CHECK(Value(f, "cairn_watch_stack_active", {{"stack", "web"}}) == 1);

  // Put back: the drift gauges go to 0, not away.
  m.RecordRun(web, Run(0, 0, 0));
  f = Parse(m);
  CHECK(Value(f, "cairn_watch_runs_total", {{"stack", "web"}}) == 2);
  CHECK(Value(f, "cairn_watch_api_requests_total", {{"stack", "web"}}) == 6);
  CHECK(Value(f, "cairn_watch_drifted_resources",
              {{"stack", "web"}, {"kind", "instance"}, {"type", "changed"}}) == 0);
  CHECK(Value(f, "cairn_watch_failing_checks", {{"stack", "web"}}) == 0);

  // A failed run counts as an error and keeps the last known drift.
  StackRunRecord failed = Run(0, 0, 0);
  failed.error = "no API";
  m.RecordRun(web, Run(1, 0, 0));
  m.RecordRun(web, failed);
  f = Parse(m);
  CHECK(Value(f, "cairn_watch_run_errors_total", {{"stack", "web"}}) == 1);
  CHECK(Value(f, "cairn_watch_drifted_resources",
              {{"stack", "web"}, {"kind", "instance"}, {"type", "changed"}}) == 1);
  m.RecordRole(web, false);
  CHECK(Value(Parse(m), "cairn_watch_stack_active", {{"stack", "web"}}) == 0);
}

TEST_CASE("watch metrics count remediations and webhook deliveries") {
  WatchMetrics m;
  const WatchedStackInfo web{"web", "/srv/web", "default"};
  StackRunRecord r = Run(1, 0, 0);
  r.remediation = RemediationRecord{1, "refused", "creates", 0};
  m.RecordRun(web, r);
  r.remediation = RemediationRecord{2, "applied", "", 1};
  m.RecordRun(web, r);
  WebhookTotals totals{4, 2, 1, 0, 3};
  auto f = Parse(m, &totals);
  CHECK(Value(f, "cairn_watch_remediations_total", {{"stack", "web"}, {"result", "refused"}}) == 1);
  CHECK(Value(f, "cairn_watch_remediations_total", {{"stack", "web"}, {"result", "applied"}}) == 1);
  CHECK(Value(f, "cairn_watch_webhook_events_total", {{"result", "delivered"}}) == 4);
  CHECK(Value(f, "cairn_watch_webhook_events_total", {{"result", "failed_attempt"}}) == 2);
  CHECK(Value(f, "cairn_watch_webhook_queued_events", {}) == 3);
  // The sender's totals grow; the counters follow, never counting twice.
  totals.delivered = 7;
  f = Parse(m, &totals);
  CHECK(Value(f, "cairn_watch_webhook_events_total", {{"result", "delivered"}}) == 7);
  f = Parse(m, &totals);
  CHECK(Value(f, "cairn_watch_webhook_events_total", {{"result", "delivered"}}) == 7);
}

}  // namespace watch_metrics_test
