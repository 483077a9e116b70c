// The catalog of region, plan and image keys (GET /v1/regions, /v1/plans,
// /v1/images). The spec leaves the allowed values open ("not shown"); these
// are Cairn's choice, documented in docs/api.md. Which keys a create may name
// is the `enum` of the schemas' region, plan and image fields (one source for
// `cairn validate` and the server); this file only describes them, and
// tests/server/catalog_test.cc holds the two to the same keys.
#pragma once

#include <string_view>

namespace cairn::server {

struct RegionInfo {
  std::string_view key, name, country;
};
struct PlanInfo {
  std::string_view key;
  int vcpus, memory_mb, disk_gb;
  double price_monthly_eur;
};
struct ImageInfo {
  std::string_view key, name, family;
};

inline constexpr RegionInfo kRegions[] = {
    {"eu-central", "Frankfurt", "DE"},
    {"us-east", "Ashburn", "US"},
    {"ap-south", "Mumbai", "IN"},
};
inline constexpr PlanInfo kPlans[] = {
    {"s-1vcpu-1gb", 1, 1024, 25, 5.0},
    {"s-2vcpu-4gb", 2, 4096, 80, 20.0},
    {"s-4vcpu-8gb", 4, 8192, 160, 40.0},
};
inline constexpr ImageInfo kImages[] = {
    {"debian-12", "Debian 12 (bookworm)", "debian"},
    {"ubuntu-22.04", "Ubuntu 22.04 LTS", "ubuntu"},
    {"ubuntu-24.04", "Ubuntu 24.04 LTS", "ubuntu"},
};

}  // namespace cairn::server
