// Fault injection for `cairn serve --faults SPEC` (off unless given). SPEC is
// a comma-separated list of NAME=VALUE:
//
//   error500=P error503=P error429=P   answer that fraction of API requests
//                                      with the error, before any execution
//   drop_before=P                      close the connection without a response,
//                                      before the request executes
//   drop_after=P                       mutations only: execute and commit,
//                                      then close without a response
//   provision_failed=P                 provisioning runs that end in failed
//   provision_retrying=P               runs that pass through retrying
//   provision_delayed=P                runs that pass through delayed
//   reconcile=P                        running records that pass through
//                                      reconciling once
//   mutation_delay=DURATION            hold each write batch before it
//                                      executes (makes "still executing"
//                                      observable)
//   seed=N                             PRNG seed (default: random)
//
// P is a probability in [0, 1]; the five request faults together at most 1.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"

namespace cairn::server {

struct FaultSpec {
  double error500 = 0, error503 = 0, error429 = 0, drop_before = 0, drop_after = 0;
  double provision_failed = 0, provision_retrying = 0, provision_delayed = 0, reconcile = 0;
  std::chrono::milliseconds mutation_delay{0};
  uint64_t seed = 0;
  bool has_seed = false;
};

Result<FaultSpec> ParseFaultSpec(std::string_view spec);

enum class RequestFault { kNone, kError500, kError503, kError429, kDropBefore, kDropAfter };

// The path a provisioning run takes (decided when it leaves queued).
struct ProvisionFate {
  bool fail = false, retry = false, delay = false, reconcile = false;
};

class FaultInjector {
 public:
  explicit FaultInjector(FaultSpec spec);
  const FaultSpec& spec() const { return spec_; }
  // kDropAfter is only returned when `mutation` is true.
  RequestFault PickRequestFault(bool mutation);
  ProvisionFate PickProvisionFate();

 private:
  double Draw();
  const FaultSpec spec_;
  Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace cairn::server
