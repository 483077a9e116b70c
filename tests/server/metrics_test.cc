// server::Metrics on its own (server/metrics.h): what it renders, read back
// with the text-format parser, and counting from several threads while
// another renders (the TSan run checks the latter).
#include "server/metrics.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <thread>
#include <vector>

#include "server/sqlite_api_store.h"
#include "tests/support/process.h"
#include "tests/support/prometheus_text.h"

namespace metrics_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::server;
using namespace cairn::testing;

namespace {

std::vector<MetricFamily> Parse(const std::string& text) {
  auto families = ParsePrometheusText(text);
  INFO(families.status().message() << "\n" << text);
  REQUIRE(families.ok());
  return *families;
}

double Value(const std::vector<MetricFamily>& families, const std::string& name,
             const PrometheusLabels& labels = {}) {
  const Sample* s = FindSample(families, name, labels);
  INFO(name);
  REQUIRE(s != nullptr);
  return s->value;
}

}  // namespace

TEST_CASE("metrics: each count lands in its metric and the histogram's bucket") {
  TempDir dir;
  auto store = SqliteApiStore::Open(dir.path(), {});
  REQUIRE(store.ok());
  Metrics m;
  m.SetMaxConnections(7);
  m.ConnectionOpened();
  m.ConnectionOpened();
  m.ConnectionClosed();
  m.MutationSubmitted();
  m.CountConnectionRefused();
  m.CountTlsHandshakeFailure();
  m.CountTlsHandshakeFailure();
  m.CountIdempotentReplay();
  m.CountFaultInjected();
  m.CountTransition("running");
  m.CountTransition("running");
  m.CountTransition("no-such-status");  // ignored
  m.CountResponse(200, 0.3);            // le 0.0005
  m.CountResponse(200, 0.5);            // le 0.0005: the bound is inclusive
  m.CountResponse(404, 7);              // le 0.01
  m.CountResponse(503, 5000);           // +Inf only
  m.CountResponse(0, 1);                // a dropped connection: code 0
  m.CountResponse(-1, 1);               // no code counted, but its time is
  m.CountResponse(600, 1);

  auto f = Parse(m.Render(**store));
  CHECK(Value(f, "cairn_max_connections") == 7);
  CHECK(Value(f, "cairn_open_connections") == 1);
  CHECK(Value(f, "cairn_mutations_in_flight") == 1);
  CHECK(Value(f, "cairn_connections_refused_total") == 1);
  CHECK(Value(f, "cairn_tls_handshake_failures_total") == 2);
  CHECK(Value(f, "cairn_idempotent_replays_total") == 1);
  CHECK(Value(f, "cairn_faults_injected_total") == 1);
  CHECK(Value(f, "cairn_lifecycle_transitions_total", {{"to", "running"}}) == 2);
  CHECK(Value(f, "cairn_lifecycle_transitions_total", {{"to", "queued"}}) == 0);
  CHECK(FindFamily(f, "cairn_lifecycle_transitions_total")->samples.size() == 13);
  CHECK(Value(f, "cairn_http_responses_total", {{"code", "200"}}) == 2);
  CHECK(Value(f, "cairn_http_responses_total", {{"code", "404"}}) == 1);
  CHECK(Value(f, "cairn_http_responses_total", {{"code", "503"}}) == 1);
  CHECK(Value(f, "cairn_http_responses_total", {{"code", "0"}}) == 1);
  CHECK(FindFamily(f, "cairn_http_responses_total")->samples.size() == 4);
  const MetricFamily* h = FindFamily(f, "cairn_http_request_duration_seconds");
  REQUIRE(h != nullptr);
  CHECK(CheckHistogram(*h).ok());
  const std::string b = "cairn_http_request_duration_seconds_bucket";
  CHECK(Value(f, b, {{"le", "0.0005"}}) == 2);
  CHECK(Value(f, b, {{"le", "0.001"}}) == 5);  // with the three of 1 ms
  CHECK(Value(f, b, {{"le", "0.005"}}) == 5);
  CHECK(Value(f, b, {{"le", "0.01"}}) == 6);
  CHECK(Value(f, b, {{"le", "1"}}) == 6);
  CHECK(Value(f, b, {{"le", "+Inf"}}) == 7);
  CHECK(Value(f, "cairn_http_request_duration_seconds_count") == 7);
  CHECK(Value(f, "cairn_http_request_duration_seconds_sum") == Approx(5.0108));
  CHECK(Value(f, "cairn_store_commits_total") == 0);
  CHECK(Value(f, "cairn_store_mutations_total") == 0);

  // The store's figures are read at each render.
  std::promise<Status> done;
  (*store)->Submit([](WriteTxn&) { return true; }, [&](const Status& st) { done.set_value(st); });
  REQUIRE(done.get_future().get().ok());
  auto after = Parse(m.Render(**store));
  CHECK(Value(after, "cairn_store_commits_total") == 1);
  CHECK(Value(after, "cairn_store_mutations_total") == 1);
}

TEST_CASE("metrics: threads count at once while another renders") {
  TempDir dir;
  auto store = SqliteApiStore::Open(dir.path(), {});
  REQUIRE(store.ok());
  Metrics m;
  constexpr int kThreads = 4;
  constexpr int kEach = 5000;
  std::atomic<bool> stop{false};
  std::vector<std::string> pages;
  std::thread scraper([&] {
    while (!stop.load()) pages.push_back(m.Render(**store));
  });
  std::vector<std::thread> counters;
  for (int t = 0; t < kThreads; ++t) {
    counters.emplace_back([&m, t] {
      for (int i = 0; i < kEach; ++i) {
        // Every thread meets the codes for the first time together.
        m.CountResponse(200 + (i % 5), 0.1 * t);
        m.ConnectionOpened();
        m.ConnectionClosed();
        m.CountTransition("deleted");
      }
    });
  }
  for (auto& t : counters) t.join();
  stop = true;
  scraper.join();
  pages.push_back(m.Render(**store));
  for (const std::string& page : pages) {
    auto f = Parse(page);
    CHECK(CheckHistogram(*FindFamily(f, "cairn_http_request_duration_seconds")).ok());
  }
  auto f = Parse(pages.back());
  for (int code = 200; code < 205; ++code) {
    CHECK(Value(f, "cairn_http_responses_total", {{"code", std::to_string(code)}}) ==
          kThreads * kEach / 5);
  }
  CHECK(FindFamily(f, "cairn_http_responses_total")->samples.size() == 5);
  CHECK(Value(f, "cairn_http_request_duration_seconds_count") == kThreads * kEach);
  CHECK(Value(f, "cairn_open_connections") == 0);
  CHECK(Value(f, "cairn_lifecycle_transitions_total", {{"to", "deleted"}}) == kThreads * kEach);
}

}  // namespace metrics_test
