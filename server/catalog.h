// The catalog of region, plan and image keys (GET /v1/regions, /v1/plans,
// /v1/images). The spec leaves the allowed values open ("not shown"); these
// are Cairn's choice, documented in docs/api.md. Which keys a create may name
// is the `enum` of the schemas' region, plan and image fields (one source for
// `cairn validate` and the server); this file only describes them, and
// tests/server/catalog_test.cc holds the two to the same keys.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
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

// Each region's instance addresses: a /12 of the shared address space
// 100.64.0.0/10 (RFC 6598) in catalog order (eu-central 100.64.0.0/12,
// us-east 100.80.0.0/12, ap-south 100.96.0.0/12), numbered by host from 1;
// a host whose last octet is 0 or 255 is never given. About a million
// addresses a region (a /16 ran out at 64,516 instances); they are not
// reused.
inline constexpr int64_t kIpv4PoolHosts = int64_t{1} << 20;

inline bool Ipv4HostSkipped(int64_t host) { return (host & 0xff) == 0 || (host & 0xff) == 255; }

// The address of host `host` of `region`'s pool; "" when the region has no
// pool or the host is outside it.
inline std::string Ipv4Address(std::string_view region, int64_t host) {
  for (size_t i = 0; i < std::size(kRegions) && i < 4; ++i) {
    if (kRegions[i].key != region) continue;
    if (host < 1 || host >= kIpv4PoolHosts - 1) return "";
    const int64_t second = 64 + 16 * static_cast<int64_t>(i) + (host >> 16);
    return "100." + std::to_string(second) + "." + std::to_string((host >> 8) & 0xff) + "." +
           std::to_string(host & 0xff);
  }
  return "";
}

}  // namespace cairn::server
