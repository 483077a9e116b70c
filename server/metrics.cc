#include "server/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <iterator>
#include <string>
#include <vector>

#include "server/api_store.h"
#include "server/customer_status.h"

namespace cairn::server {

namespace {

static_assert(std::size(kRawStatuses) == 13, "Metrics::transitions_to_ holds one per raw status");

// The store's figures, read when /metrics is scraped: the store counts them
// itself (its writer thread), so they are collected, not mirrored.
class MetricsStoreFigures : public prometheus::Collectable {
 public:
  explicit MetricsStoreFigures(const ApiStore& store) : store_(store) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    out.push_back(Counter("cairn_store_commits_total", "Group commits (one fsync each).",
                          static_cast<double>(store_.commits())));
    out.push_back(Counter("cairn_store_mutations_total", "Mutations committed.",
                          static_cast<double>(store_.committed_mutations())));
    return out;
  }

 private:
  static prometheus::MetricFamily Counter(std::string name, std::string help, double value) {
    prometheus::MetricFamily family;
    family.name = std::move(name);
    family.help = std::move(help);
    family.type = prometheus::MetricType::Counter;
    family.metric.emplace_back();
    family.metric.back().counter.value = value;
    return family;
  }

  const ApiStore& store_;
};

}  // namespace

Metrics::Metrics() : registry_(std::make_unique<prometheus::Registry>()) {
  auto& registry = *registry_;
  responses_family_ = &prometheus::BuildCounter()
                           .Name("cairn_http_responses_total")
                           .Help("HTTP responses by status code.")
                           .Register(registry);
  request_duration_ =
      &prometheus::BuildHistogram()
           .Name("cairn_http_request_duration_seconds")
           .Help("Time from request read to response ready.")
           .Register(registry)
           .Add({}, prometheus::Histogram::BucketBoundaries(kLatencyBucketsSeconds.begin(),
                                                            kLatencyBucketsSeconds.end()));
  auto gauge = [&](const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
  };
  auto counter = [&](const char* name, const char* help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
  };
  open_connections_ = gauge("cairn_open_connections", "Open client connections.");
  max_connections_ =
      gauge("cairn_max_connections", "Open connections allowed (--max-connections).");
  connections_refused_ =
      counter("cairn_connections_refused_total", "Connections closed at accept: at the cap.");
  tls_handshake_failures_ = counter("cairn_tls_handshake_failures_total",
                                    "Connections closed before a TLS handshake completed (a "
                                    "plain HTTP request included).");
  mutations_in_flight_ =
      gauge("cairn_mutations_in_flight", "Mutations waiting for their group commit.");
  idempotent_replays_ =
      counter("cairn_idempotent_replays_total", "Responses replayed for a reused Idempotency-Key.");
  faults_injected_ =
      counter("cairn_faults_injected_total", "Requests answered or dropped by --faults.");
  auto& transitions = prometheus::BuildCounter()
                          .Name("cairn_lifecycle_transitions_total")
                          .Help("Lifecycle steps by the raw status entered.")
                          .Register(registry);
  // Every raw status is listed from the start, at 0, as before.
  for (size_t i = 0; i < std::size(kRawStatuses); ++i) {
    transitions_to_[i] = &transitions.Add({{"to", std::string(kRawStatuses[i])}});
  }
}

Metrics::~Metrics() = default;

prometheus::Counter& Metrics::ResponseCounter(int status) {
  std::atomic<prometheus::Counter*>& slot = responses_[status];
  prometheus::Counter* c = slot.load(std::memory_order_acquire);
  if (c == nullptr) {
    // Family::Add returns the one counter of a label set, whichever thread
    // adds it first, so two threads racing here store the same pointer.
    c = &responses_family_->Add({{"code", std::to_string(status)}});
    slot.store(c, std::memory_order_release);
  }
  return *c;
}

void Metrics::CountResponse(int status, double latency_ms) {
  if (status >= 0 && status < kMaxStatus) ResponseCounter(status).Increment();
  request_duration_->Observe(latency_ms / 1000.0);
}

void Metrics::CountTransition(std::string_view raw) {
  for (size_t i = 0; i < std::size(kRawStatuses); ++i) {
    if (kRawStatuses[i] == raw) transitions_to_[i]->Increment();
  }
}

void Metrics::CountIdempotentReplay() { idempotent_replays_->Increment(); }
void Metrics::CountFaultInjected() { faults_injected_->Increment(); }
void Metrics::CountConnectionRefused() { connections_refused_->Increment(); }
void Metrics::CountTlsHandshakeFailure() { tls_handshake_failures_->Increment(); }
void Metrics::ConnectionOpened() { open_connections_->Increment(); }
void Metrics::ConnectionClosed() { open_connections_->Decrement(); }
void Metrics::MutationSubmitted() { mutations_in_flight_->Increment(); }
void Metrics::MutationAnswered() { mutations_in_flight_->Decrement(); }
void Metrics::SetMaxConnections(int64_t n) { max_connections_->Set(static_cast<double>(n)); }

std::string Metrics::Render(const ApiStore& store) const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  std::vector<prometheus::MetricFamily> figures = MetricsStoreFigures(store).Collect();
  families.insert(families.end(), std::make_move_iterator(figures.begin()),
                  std::make_move_iterator(figures.end()));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace cairn::server
