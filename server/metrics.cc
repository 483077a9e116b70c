#include "server/metrics.h"

#include "server/api_store.h"
#include "server/customer_status.h"

namespace cairn::server {

void Metrics::CountResponse(int status, double latency_ms) {
  if (status >= 0 && status < static_cast<int>(responses_by_status.size())) {
    responses_by_status[status].fetch_add(1, std::memory_order_relaxed);
  }
  size_t i = 0;
  while (i < kLatencyBucketsMs.size() && latency_ms > kLatencyBucketsMs[i]) ++i;
  latency_buckets[i].fetch_add(1, std::memory_order_relaxed);
  latency_sum_us.fetch_add(static_cast<uint64_t>(latency_ms * 1000), std::memory_order_relaxed);
}

void Metrics::CountTransition(std::string_view raw) {
  for (size_t i = 0; i < std::size(kRawStatuses); ++i) {
    if (kRawStatuses[i] == raw) transitions_to[i].fetch_add(1, std::memory_order_relaxed);
  }
}

std::string Metrics::Render(const ApiStore& store) const {
  std::string out;
  out += "# HELP cairn_http_responses_total HTTP responses by status code.\n";
  out += "# TYPE cairn_http_responses_total counter\n";
  for (size_t s = 0; s < responses_by_status.size(); ++s) {
    uint64_t n = responses_by_status[s].load(std::memory_order_relaxed);
    if (n > 0) {
      out += "cairn_http_responses_total{code=\"" + std::to_string(s) + "\"} " + std::to_string(n) +
             "\n";
    }
  }
  out += "# HELP cairn_http_request_duration_seconds Time from request read to response ready.\n";
  out += "# TYPE cairn_http_request_duration_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < latency_buckets.size(); ++i) {
    cumulative += latency_buckets[i].load(std::memory_order_relaxed);
    std::string le = i < kLatencyBucketsMs.size() ? std::to_string(kLatencyBucketsMs[i] / 1000.0)
                                                  : std::string("+Inf");
    out += "cairn_http_request_duration_seconds_bucket{le=\"" + le + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += "cairn_http_request_duration_seconds_sum " + std::to_string(latency_sum_us.load() / 1e6) +
         "\n";
  out += "cairn_http_request_duration_seconds_count " + std::to_string(cumulative) + "\n";
  out += "# HELP cairn_open_connections Open client connections.\n";
  out += "# TYPE cairn_open_connections gauge\n";
  out += "cairn_open_connections " + std::to_string(open_connections.load()) + "\n";
  out += "# HELP cairn_max_connections Open connections allowed (--max-connections).\n";
  out += "# TYPE cairn_max_connections gauge\n";
  out += "cairn_max_connections " + std::to_string(max_connections.load()) + "\n";
  out += "# HELP cairn_connections_refused_total Connections closed at accept: at the cap.\n";
  out += "# TYPE cairn_connections_refused_total counter\n";
  out += "cairn_connections_refused_total " + std::to_string(connections_refused.load()) + "\n";
  out +=
      "# HELP cairn_tls_handshake_failures_total Connections closed before a TLS handshake "
      "completed (a plain HTTP request included).\n";
  out += "# TYPE cairn_tls_handshake_failures_total counter\n";
  out +=
      "cairn_tls_handshake_failures_total " + std::to_string(tls_handshake_failures.load()) + "\n";
  out += "# HELP cairn_mutations_in_flight Mutations waiting for their group commit.\n";
  out += "# TYPE cairn_mutations_in_flight gauge\n";
  out += "cairn_mutations_in_flight " + std::to_string(mutations_in_flight.load()) + "\n";
  out += "# HELP cairn_idempotent_replays_total Responses replayed for a reused Idempotency-Key.\n";
  out += "# TYPE cairn_idempotent_replays_total counter\n";
  out += "cairn_idempotent_replays_total " + std::to_string(idempotent_replays.load()) + "\n";
  out += "# HELP cairn_faults_injected_total Requests answered or dropped by --faults.\n";
  out += "# TYPE cairn_faults_injected_total counter\n";
  out += "cairn_faults_injected_total " + std::to_string(faults_injected.load()) + "\n";
  out += "# HELP cairn_store_commits_total Group commits (one fsync each).\n";
  out += "# TYPE cairn_store_commits_total counter\n";
  out += "cairn_store_commits_total " + std::to_string(store.commits()) + "\n";
  out += "# HELP cairn_store_mutations_total Mutations committed.\n";
  out += "# TYPE cairn_store_mutations_total counter\n";
  out += "cairn_store_mutations_total " + std::to_string(store.committed_mutations()) + "\n";
  out += "# HELP cairn_lifecycle_transitions_total Lifecycle steps by the raw status entered.\n";
  out += "# TYPE cairn_lifecycle_transitions_total counter\n";
  for (size_t i = 0; i < std::size(kRawStatuses); ++i) {
    out += "cairn_lifecycle_transitions_total{to=\"" + std::string(kRawStatuses[i]) + "\"} " +
           std::to_string(transitions_to[i].load()) + "\n";
  }
  return out;
}

}  // namespace cairn::server
