#include "engine/watch/watch_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "base/mutex.h"

namespace cairn {

namespace prom = ::prometheus;

struct WatchMetrics::Impl {
  Mutex mu;
  prom::Registry registry;
  prom::Family<prom::Gauge>& up = prom::BuildGauge()
                                      .Name("cairn_watch_up")
                                      .Help("1 while the watcher runs.")
                                      .Register(registry);
  prom::Family<prom::Counter>& runs =
      prom::BuildCounter()
          .Name("cairn_watch_runs_total")
          .Help("Runs of a stack (refresh, drift, checks) made by this watcher.")
          .Register(registry);
  prom::Family<prom::Counter>& run_errors =
      prom::BuildCounter()
          .Name("cairn_watch_run_errors_total")
          .Help("Runs of a stack that failed (the API or the state could not be read).")
          .Register(registry);
  prom::Family<prom::Counter>& requests = prom::BuildCounter()
                                              .Name("cairn_watch_api_requests_total")
                                              .Help("API requests made by the runs of a stack.")
                                              .Register(registry);
  prom::Family<prom::Gauge>& last_run =
      prom::BuildGauge()
          .Name("cairn_watch_last_run_timestamp_seconds")
          .Help("When the last run of a stack finished (Unix time).")
          .Register(registry);
  prom::Family<prom::Gauge>& last_duration = prom::BuildGauge()
                                                 .Name("cairn_watch_last_run_duration_seconds")
                                                 .Help("How long the last run of a stack took.")
                                                 .Register(registry);
  prom::Family<prom::Gauge>& drifted =
      prom::BuildGauge()
          .Name("cairn_watch_drifted_resources")
          .Help(
              "Resources of a stack drifted at its last good run, by kind and type "
              "(changed, deleted, failed, unmanaged).")
          .Register(registry);
  prom::Family<prom::Gauge>& failing_checks =
      prom::BuildGauge()
          .Name("cairn_watch_failing_checks")
          .Help("Checks and conditions of a stack failing at its last good run.")
          .Register(registry);
  prom::Family<prom::Gauge>& active =
      prom::BuildGauge()
          .Name("cairn_watch_stack_active")
          .Help("1 when this watcher holds the stack, 0 when another watcher does.")
          .Register(registry);
  prom::Family<prom::Counter>& remediations =
      prom::BuildCounter()
          .Name("cairn_watch_remediations_total")
          .Help("Remediation decisions of a stack, by result (applied, refused, failed).")
          .Register(registry);
  prom::Family<prom::Counter>& webhook =
      prom::BuildCounter()
          .Name("cairn_watch_webhook_events_total")
          .Help("Webhook deliveries, by result (delivered, refused, failed_attempt, dropped).")
          .Register(registry);
  prom::Family<prom::Gauge>& webhook_queue =
      prom::BuildGauge()
          .Name("cairn_watch_webhook_queued_events")
          .Help("Events waiting to be delivered to the webhook.")
          .Register(registry);
  // The drift gauges set so far, per stack: a kind no longer drifted goes
  // back to 0 rather than keeping its last count.
  std::map<std::string, std::set<std::pair<std::string, std::string>>> drift_series GUARDED_BY(mu);
  WebhookTotals webhook_seen GUARDED_BY(mu);
};

WatchMetrics::WatchMetrics() : impl_(std::make_unique<Impl>()) { impl_->up.Add({}).Set(1); }

WatchMetrics::~WatchMetrics() = default;

void WatchMetrics::RecordRun(const WatchedStackInfo& stack, const StackRunRecord& run) {
  Impl& m = *impl_;
  MutexLock lock(m.mu);
  const prom::Labels s{{"stack", stack.name}};
  m.runs.Add(s).Increment();
  m.requests.Add(s).Increment(run.requests);
  m.last_run.Add(s).Set(static_cast<double>(run.finished_ms) / 1000.0);
  m.last_duration.Add(s).Set(static_cast<double>(run.finished_ms - run.started_ms) / 1000.0);
  if (run.remediation) {
    m.remediations.Add({{"stack", stack.name}, {"result", run.remediation->result}}).Increment();
  }
  if (run.failed()) {
    m.run_errors.Add(s).Increment();
    return;  // drift and checks stay as last known
  }
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const DriftItem& item : run.drift.items) {
    if (item.counts()) ++counts[{item.kind, DriftTypeName(item.type)}];
  }
  auto& series = m.drift_series[stack.name];
  for (const auto& key : series) {
    if (!counts.count(key)) counts[key] = 0;
  }
  for (const auto& [key, n] : counts) {
    m.drifted.Add({{"stack", stack.name}, {"kind", key.first}, {"type", key.second}}).Set(n);
    series.insert(key);
  }
  m.failing_checks.Add(s).Set(run.FailingChecks());
}

void WatchMetrics::RecordRole(const WatchedStackInfo& stack, bool active) {
  MutexLock lock(impl_->mu);
  impl_->active.Add({{"stack", stack.name}}).Set(active ? 1 : 0);
}

std::string WatchMetrics::Render(const WebhookTotals* webhook) {
  Impl& m = *impl_;
  {
    MutexLock lock(m.mu);
    if (webhook != nullptr) {
      // The sender counts from its start; the counters move by the difference.
      auto add = [&](const char* result, int64_t now, int64_t& seen) {
        m.webhook.Add({{"result", result}}).Increment(static_cast<double>(now - seen));
        seen = now;
      };
      add("delivered", webhook->delivered, m.webhook_seen.delivered);
      add("refused", webhook->refused, m.webhook_seen.refused);
      add("failed_attempt", webhook->failed_attempts, m.webhook_seen.failed_attempts);
      add("dropped", webhook->dropped, m.webhook_seen.dropped);
      m.webhook_queue.Add({}).Set(static_cast<double>(webhook->queued));
    }
  }
  std::ostringstream out;
  prom::TextSerializer().Serialize(out, m.registry.Collect());
  return out.str();
}

}  // namespace cairn
