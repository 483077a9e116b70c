// Faults on the wire: `cairn serve --faults` answers a share of the requests
// with 500, 503 or 429, or drops the connection before the request executes
// or (mutations) after it has executed and committed. The provider retries
// 5xx, 429 and network errors with the same Idempotency-Key and body, so a
// single `cairn apply` must converge -- every desired resource once, nothing
// else -- as must a single apply of a change (replaces and updates), and a
// single `cairn destroy` must leave nothing behind.
//
// Time is bounded by the provider document: 5 s per request, 60 s per
// operation's retries.
#include <catch2/catch.hpp>

#include "tests/cli/support/live_inventory.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace fault_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

constexpr const char* kProvider = R"(kind: provider
name: infra
timeouts: {request: 5, operation: 60, create: 60, update: 60, delete: 60})";

std::string Output(const CommandResult& r) {
  return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// A counter from /metrics (answered before any fault is injected).
long Counter(HttpClient& client, const std::string& name) {
  auto families = ScrapeMetrics(client);
  const Sample* s = FindSample(families, name);
  INFO(name);
  REQUIRE(s != nullptr);
  REQUIRE(FindFamily(families, name)->type == "counter");
  return static_cast<long>(s->value);
}

// `expect_replays`: mutations were dropped after committing, so some retries
// must have been answered from the idempotency store.
void ApplyAndDestroyUnder(const std::string& faults, bool expect_replays = false) {
  INFO("--faults " << faults);
  ServeFixture server({"--faults", faults});
  TempDir dir;
  WriteFile(dir.path() + "/main.yaml", CrashStackYaml(kProvider));
  std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"CAIRN_CRASH_AT", ""}};
  auto client = server.Client();

  auto apply = RunCairn({"apply", dir.path(), "--auto-approve"}, env);
  INFO("apply: " << Output(apply));
  CHECK(apply.exit_code == 0);
  {
    Inventory live = LiveInventory(*client);
    INFO("live after apply:\n" << Describe(live));
    CHECK(live == CrashStackInventory());
    CheckCrashStackWiring(*client);
  }
  auto plan = RunCairn({"plan", dir.path(), "--detailed-exitcode"}, env);
  INFO("plan: " << Output(plan));
  CHECK(plan.exit_code == 0);

  // Replaces (deletes and creates) and updates under the same faults.
  WriteFile(dir.path() + "/main.yaml", CrashStackYaml(kProvider, /*changed=*/true));
  auto change = RunCairn({"apply", dir.path(), "--auto-approve"}, env);
  INFO("changing apply: " << Output(change));
  CHECK(change.exit_code == 0);
  {
    Inventory live = LiveInventory(*client);
    INFO("live after the change:\n" << Describe(live));
    CHECK(live == CrashStackInventory());
    CheckCrashStackWiring(*client);
    CheckCrashStackChanged(*client);
  }
  auto replan = RunCairn({"plan", dir.path(), "--detailed-exitcode"}, env);
  INFO("plan after the change: " << Output(replan));
  CHECK(replan.exit_code == 0);

  auto destroy = RunCairn({"destroy", dir.path(), "--auto-approve"}, env);
  INFO("destroy: " << Output(destroy));
  CHECK(destroy.exit_code == 0);
  {
    Inventory live = LiveInventory(*client);
    INFO("live after destroy:\n" << Describe(live));
    CHECK(live == EmptyInventory());
  }
  // The runs really met faults.
  CHECK(Counter(*client, "cairn_faults_injected_total") > 0);
  if (expect_replays) CHECK(Counter(*client, "cairn_idempotent_replays_total") > 0);
}

}  // namespace

TEST_CASE("faults: 500 and 503 answers are retried with the same key") {
  ApplyAndDestroyUnder("error500=0.15,error503=0.15");
}

TEST_CASE("faults: 429 answers wait for Retry-After and are retried") {
  ApplyAndDestroyUnder("error429=0.08");
}

TEST_CASE("faults: connections dropped before the request executes") {
  ApplyAndDestroyUnder("drop_before=0.2");
}

TEST_CASE("faults: connections dropped after a mutation committed are replayed, not redone") {
  ApplyAndDestroyUnder("drop_after=0.4", /*expect_replays=*/true);
}

TEST_CASE("faults: everything at once") {
  ApplyAndDestroyUnder(
      "error500=0.08,error503=0.08,error429=0.04,drop_before=0.08,drop_after=0.15");
}

}  // namespace fault_test
