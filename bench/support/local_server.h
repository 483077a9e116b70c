// What the benchmarks that drive the real binaries share: a `cairn serve`
// child on loopback, its /metrics counters, and a failure that unwinds
// (stopping the servers started so far) instead of exiting.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "providers/infra/curl_transport.h"
#include "tests/support/process.h"

namespace cairn::bench {

inline constexpr const char* kToken = "cairn_bench_token_0123456789abcdef";

// Thrown by Die(): unwinding stops the servers started so far (a plain exit
// would leave them running) and removes the temporary directories.
struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Die(const std::string& what);

// A `cairn serve` on 127.0.0.1 with a fresh data directory and no rate
// limit; each lifecycle step takes `provision_delay` ("0", "1s", ...).
class LocalServer {
 public:
  LocalServer(const std::string& cairn, const std::string& data_dir,
              const std::string& provision_delay = "0");
  ~LocalServer();
  const std::string& endpoint() const { return endpoint_; }

  // CPU time (user + system) the server process has used so far, in seconds.
  double CpuSeconds() const;
  // Sum of cairn_http_responses_total: every response the server has sent
  // (the scrape itself is counted after it is answered).
  long ResponsesSoFar() { return MetricSum("cairn_http_responses_total"); }
  // cairn_store_commits_total: the writer's committed (synced) batches.
  long StoreCommitsSoFar() { return MetricSum("cairn_store_commits_total"); }

 private:
  // The sum of the /metrics samples named `name`, whatever their labels
  // (the page read by tests/support/prometheus_text.h).
  long MetricSum(const std::string& name);

  std::unique_ptr<testing::ChildProcess> process_;
  std::string endpoint_;
  CurlTransport transport_;
};

// Requests a command made, from the server's counters: the delta minus the
// scrape taken before it.
struct RequestCounter {
  LocalServer& server;
  long before = server.ResponsesSoFar();
  long Made() { return server.ResponsesSoFar() - before - 1; }
};

}  // namespace cairn::bench
