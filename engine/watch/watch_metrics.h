// The metrics of `cairn watch` (GET /metrics, Prometheus' text format,
// through prometheus-cpp's core library; docs/watch.md lists them): per
// stack its runs, run errors, API requests, last run's time and duration,
// drifted resources by kind and type, failing checks, whether this watcher
// is the active one, remediations by result; the webhook's deliveries; and
// cairn_watch_up. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "engine/watch/watch_status.h"

namespace cairn {

struct WebhookTotals {
  int64_t delivered = 0, failed_attempts = 0, refused = 0, dropped = 0, queued = 0;
};

class WatchMetrics {
 public:
  WatchMetrics();
  ~WatchMetrics();
  WatchMetrics(const WatchMetrics&) = delete;
  WatchMetrics& operator=(const WatchMetrics&) = delete;

  // After each run of a stack (Watcher's on_run).
  void RecordRun(const WatchedStackInfo& stack, const StackRunRecord& run);
  // When a stack's role is known or changes (Watcher's on_role).
  void RecordRole(const WatchedStackInfo& stack, bool active);
  // The exposition, with the webhook's totals as they are now (null: none).
  std::string Render(const WebhookTotals* webhook);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn
