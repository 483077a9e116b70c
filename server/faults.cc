#include "server/faults.h"

#include <charconv>
#include <string>

#include "base/duration.h"

namespace cairn::server {

Result<FaultSpec> ParseFaultSpec(std::string_view spec) {
  FaultSpec f;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("--faults: '" + std::string(item) + "' is not NAME=VALUE");
    }
    std::string name(item.substr(0, eq));
    std::string value(item.substr(eq + 1));
    if (name == "seed") {
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), f.seed);
      if (ec != std::errc() || p != value.data() + value.size()) {
        return Status::InvalidArgument("--faults: seed must be a non-negative integer");
      }
      f.has_seed = true;
      continue;
    }
    if (name == "mutation_delay") {
      auto d = ParseDuration(value);
      if (!d.ok())
        return Status::InvalidArgument("--faults: mutation_delay: " + d.status().message());
      f.mutation_delay = *d;
      continue;
    }
    double* target = name == "error500"             ? &f.error500
                     : name == "error503"           ? &f.error503
                     : name == "error429"           ? &f.error429
                     : name == "drop_before"        ? &f.drop_before
                     : name == "drop_after"         ? &f.drop_after
                     : name == "provision_failed"   ? &f.provision_failed
                     : name == "provision_retrying" ? &f.provision_retrying
                     : name == "provision_delayed"  ? &f.provision_delayed
                     : name == "reconcile"          ? &f.reconcile
                                                    : nullptr;
    if (target == nullptr) {
      return Status::InvalidArgument(
          "--faults: unknown fault '" + name +
          "' (error500, error503, error429, drop_before, drop_after, provision_failed, "
          "provision_retrying, provision_delayed, reconcile, mutation_delay, seed)");
    }
    double p = -1;
    try {
      size_t used = 0;
      p = std::stod(value, &used);
      if (used != value.size()) p = -1;
    } catch (const std::exception&) {
      p = -1;
    }
    if (!(p >= 0.0 && p <= 1.0)) {
      return Status::InvalidArgument("--faults: " + name + " must be a probability in [0, 1]");
    }
    *target = p;
  }
  if (f.error500 + f.error503 + f.error429 + f.drop_before + f.drop_after > 1.0 + 1e-9) {
    return Status::InvalidArgument("--faults: request fault probabilities add up to more than 1");
  }
  return f;
}

FaultInjector::FaultInjector(FaultSpec spec)
    : spec_(spec), rng_(spec.has_seed ? spec.seed : std::random_device{}()) {}

double FaultInjector::Draw() {
  MutexLock lock(mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

RequestFault FaultInjector::PickRequestFault(bool mutation) {
  double total = spec_.error500 + spec_.error503 + spec_.error429 + spec_.drop_before +
                 (mutation ? spec_.drop_after : 0);
  if (total <= 0) return RequestFault::kNone;
  double r = Draw();
  if ((r -= spec_.error500) < 0) return RequestFault::kError500;
  if ((r -= spec_.error503) < 0) return RequestFault::kError503;
  if ((r -= spec_.error429) < 0) return RequestFault::kError429;
  if ((r -= spec_.drop_before) < 0) return RequestFault::kDropBefore;
  if (mutation && (r -= spec_.drop_after) < 0) return RequestFault::kDropAfter;
  return RequestFault::kNone;
}

ProvisionFate FaultInjector::PickProvisionFate() {
  ProvisionFate f;
  if (spec_.provision_failed > 0) f.fail = Draw() < spec_.provision_failed;
  if (spec_.provision_retrying > 0) f.retry = Draw() < spec_.provision_retrying;
  if (spec_.provision_delayed > 0) f.delay = Draw() < spec_.provision_delayed;
  if (spec_.reconcile > 0) f.reconcile = Draw() < spec_.reconcile;
  return f;
}

}  // namespace cairn::server
