#include "server/lifecycle.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <vector>

namespace lifecycle_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;

namespace {

// Runs the worker's step function until the record settles; returns the
// raw statuses it entered.
std::vector<std::string> Walk(Record r, ProvisionFate fate) {
  std::vector<std::string> seen;
  int ips = 0;
  for (int i = 0; i < 20; ++i) {
    bool stepped = AdvanceLifecycle(
        &r, 1000, 10, [&] { return fate; },
        [&](const std::string&) -> cairn::Result<std::string> {
          return "100.64.0." + std::to_string(++ips);
        });
    if (!stepped) break;
    seen.push_back(r.status);
    if (r.next_step_ms == 0) break;
    CHECK(r.next_step_ms == 1010);
  }
  CHECK(ips <= 1);
  return seen;
}

Record Queued(const std::string& kind) {
  Record r;
  r.kind = kind;
  r.status = "queued";
  r.attrs = {{"region", "eu-central"}};
  return r;
}

}  // namespace

TEST_CASE("lifecycle: queued -> provisioning -> running, ipv4 for instances only") {
  using V = std::vector<std::string>;
  CHECK(Walk(Queued("instance"), {}) == V{"provisioning", "running"});
  Record r = Queued("instance");
  ProvisionFate none;
  AdvanceLifecycle(
      &r, 0, 0, [&] { return none; },
      [](const std::string&) -> cairn::Result<std::string> { return std::string("100.64.0.9"); });
  AdvanceLifecycle(
      &r, 0, 0, [&] { return none; },
      [](const std::string&) -> cairn::Result<std::string> { return std::string("100.64.0.9"); });
  CHECK(r.status == "running");
  CHECK(r.attrs["ipv4"] == "100.64.0.9");
  Record n = Queued("network");
  AdvanceLifecycle(
      &n, 0, 0, [&] { return none; },
      [](const std::string&) -> cairn::Result<std::string> {
        return cairn::Status::Internal("no");
      });
  AdvanceLifecycle(
      &n, 0, 0, [&] { return none; },
      [](const std::string&) -> cairn::Result<std::string> {
        return cairn::Status::Internal("no");
      });
  CHECK(n.status == "running");
  CHECK_FALSE(n.attrs.contains("ipv4"));
}

TEST_CASE("lifecycle: fault paths") {
  using V = std::vector<std::string>;
  CHECK(Walk(Queued("instance"), {.fail = true}) == V{"provisioning", "failed"});
  CHECK(Walk(Queued("instance"), {.retry = true}) ==
        V{"provisioning", "retrying", "provisioning", "running"});
  CHECK(Walk(Queued("instance"), {.delay = true}) ==
        V{"provisioning", "delayed", "provisioning", "running"});
  CHECK(Walk(Queued("instance"), {.reconcile = true}) ==
        V{"provisioning", "running", "reconciling", "running"});
  CHECK(
      Walk(Queued("instance"), {.fail = false, .retry = true, .delay = true, .reconcile = true}) ==
      V{"provisioning", "retrying", "provisioning", "delayed", "provisioning", "running",
        "reconciling", "running"});
}

TEST_CASE("lifecycle: with a zero delay every due step is taken at once, each reported") {
  using V = std::vector<std::string>;
  int ips = 0;
  auto ip = [&](const std::string&) -> cairn::Result<std::string> {
    return "100.64.0." + std::to_string(++ips);
  };
  ProvisionFate all{.fail = false, .retry = true, .delay = true, .reconcile = true};
  Record r = Queued("instance");
  CHECK(AdvanceDue(
            &r, 1000, 0, [&] { return all; }, ip) == V{"provisioning", "retrying", "provisioning",
                                                       "delayed", "provisioning", "running",
                                                       "reconciling", "running"});
  CHECK(r.next_step_ms == 0);
  CHECK(ips == 1);
  CHECK(AdvanceDue(
            &r, 1000, 0, [&] { return all; }, ip)
            .empty());  // settled: nothing due

  // With a delay, one step per call: the next is scheduled, not taken.
  Record s = Queued("instance");
  CHECK(AdvanceDue(
            &s, 1000, 10, [&] { return ProvisionFate{}; }, ip) == V{"provisioning"});
  CHECK(s.next_step_ms == 1010);
  CHECK(AdvanceDue(
            &s, 1010, 10, [&] { return ProvisionFate{}; }, ip) == V{"running"});

  // A failure ends the run at once.
  Record f = Queued("instance");
  CHECK(AdvanceDue(
            &f, 1000, 0, [&] { return ProvisionFate{.fail = true}; }, ip) ==
        V{"provisioning", "failed"});
}

TEST_CASE("lifecycle: actions and deletion settle") {
  using V = std::vector<std::string>;
  for (auto [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"stopping", "stopped"},
                                                        {"starting", "running"},
                                                        {"rebooting", "running"},
                                                        {"deleting", "deleted"}}) {
    Record r = Queued("instance");
    r.status = from;
    CHECK(Walk(r, {}) == V{to});
  }
  Record settled = Queued("instance");
  settled.status = "stopped";
  CHECK(Walk(settled, {}).empty());
}

TEST_CASE("schemas/openapi.yaml names the error codes of conflicts and limits") {
  // (Routes and methods: tests/server/openapi_conformance_test.cc.)
  std::ifstream in(std::string(CAIRN_SOURCE_DIR) + "/schemas/openapi.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  for (const char* code : {"idempotency_key_in_use", "resource_in_use", "action_not_allowed",
                           "payload_too_large", "unsupported_media_type", "rate_limited"}) {
    CHECK(doc.find(code) != std::string::npos);
  }
}

}  // namespace lifecycle_test
