// What GET /metrics reports: the server's counters, gauges and request
// latency histogram, kept in a prometheus::Registry (prometheus-cpp's core
// library) and rendered by its TextSerializer in the Prometheus text
// exposition format 0.0.4. The store's own figures (group commits, mutations
// committed) are read from the ApiStore at scrape time. docs/api.md lists
// every metric; their names, labels and meanings are what dashboards read.
//
// Thread-safe: any thread may count while another renders. The counting
// calls are on the request path and stay cheap: every metric object is made
// once (the per-status-code counters on the first response with that code)
// and kept by pointer, so no call looks a label set up.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace cairn::server {

class ApiStore;

class Metrics {
 public:
  // Upper bounds of the request latency histogram's buckets, in seconds.
  static constexpr std::array<double, 11> kLatencyBucketsSeconds = {
      0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};
  // Status codes counted by cairn_http_responses_total{code}: [0, kMaxStatus).
  static constexpr int kMaxStatus = 600;

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // A response sent (status 0: a connection dropped without one), and the
  // time from its request read to its response ready.
  void CountResponse(int status, double latency_ms);
  // A lifecycle step into `raw_status` (one of kRawStatuses; others ignored).
  void CountTransition(std::string_view raw_status);
  void CountIdempotentReplay();
  void CountFaultInjected();
  void CountConnectionRefused();
  void CountTlsHandshakeFailure();
  void ConnectionOpened();
  void ConnectionClosed();
  void MutationSubmitted();
  void MutationAnswered();
  void SetMaxConnections(int64_t n);

  // The text exposition of every metric, the store's read now.
  std::string Render(const ApiStore& store) const;

 private:
  prometheus::Counter& ResponseCounter(int status);

  std::unique_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* responses_family_;
  // cairn_http_responses_total{code=N}, made on the first response with
  // code N (so that a scrape lists only the codes sent); null until then.
  std::array<std::atomic<prometheus::Counter*>, kMaxStatus> responses_{};
  prometheus::Histogram* request_duration_;
  prometheus::Gauge* open_connections_;
  prometheus::Gauge* max_connections_;
  prometheus::Counter* connections_refused_;
  prometheus::Counter* tls_handshake_failures_;
  prometheus::Gauge* mutations_in_flight_;
  prometheus::Counter* idempotent_replays_;
  prometheus::Counter* faults_injected_;
  std::array<prometheus::Counter*, 13> transitions_to_{};  // by index in kRawStatuses
};

}  // namespace cairn::server
