// Counters behind GET /metrics (Prometheus text exposition format 0.0.4).
// Lock-free: every field is atomic, so any thread may count.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::server {

class ApiStore;

struct Metrics {
  static constexpr std::array<double, 11> kLatencyBucketsMs = {0.5, 1,   2,   5,   10,  25,
                                                               50,  100, 250, 500, 1000};
  std::array<std::atomic<uint64_t>, 600> responses_by_status{};
  std::array<std::atomic<uint64_t>, kLatencyBucketsMs.size() + 1> latency_buckets{};
  std::atomic<uint64_t> latency_sum_us{0};
  std::atomic<uint64_t> idempotent_replays{0};
  std::atomic<uint64_t> faults_injected{0};
  std::atomic<int64_t> open_connections{0};
  std::atomic<int64_t> max_connections{0};          // --max-connections
  std::atomic<uint64_t> connections_refused{0};     // closed at accept: at the cap
  std::atomic<uint64_t> tls_handshake_failures{0};  // TLS: no handshake (plain HTTP too)
  std::atomic<int64_t> mutations_in_flight{0};      // submitted to the writer, not yet answered
  std::array<std::atomic<uint64_t>, 13> transitions_to{};  // by index in kRawStatuses

  void CountResponse(int status, double latency_ms);
  void CountTransition(std::string_view raw_status);
  std::string Render(const ApiStore& store) const;
};

}  // namespace cairn::server
