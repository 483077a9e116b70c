// `cairn apply` and `cairn destroy` with more resources waiting to be ready
// (or gone) than --max-pending, against a real `cairn serve` that takes its
// time to provision: every one is sent, and the command ends. The commands
// run as child processes with a deadline, so that a hang fails the test
// instead of stopping the suite.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace max_pending_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

// One network and `instances` instances on it: once the network is ready,
// every instance is ready to be sent at once.
std::string NetworkAndInstances(int instances) {
  return "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: " +
         std::to_string(instances) +
         "\nspec:\n  name: web-${count.index}\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
         "  image: debian-12\n  network: ${network.app.id}\n";
}

struct Finished {
  int exit_code = -1;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs `cairn args...`, reading its output as it comes (a full pipe would
// stall it), and kills it if it has not ended within `limit`.
Finished RunWithin(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, std::chrono::seconds limit) {
  std::vector<std::string> argv = {CairnBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess child(argv, env);
  Finished f;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      f.timed_out = true;
      break;
    }
    auto line = child.ReadLine(left);
    if (!line) break;  // end of output (or the deadline, checked above next time round)
    f.out += *line + "\n";
  }
  f.timed_out = f.timed_out || std::chrono::steady_clock::now() >= deadline;
  // The output is over: the process is exiting (a moment's grace), or hung.
  f.exit_code = child.Wait(f.timed_out ? std::chrono::seconds(1) : std::chrono::seconds(30));
  f.err = child.Stderr();
  return f;
}

// Live resources behind a list route, all pages.
size_t Count(ServeFixture& server, const std::string& route) {
  auto client = server.Client();
  size_t n = 0;
  std::string cursor;
  for (;;) {
    auto r = client->Get(route + "?limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
    REQUIRE(r.status == 200);
    nlohmann::json j = r.json();
    n += j["data"].size();
    const nlohmann::json& p = j["pagination"];
    std::string next;
    for (const char* field : {"next_cursor", "next"}) {
      if (p.contains(field) && p[field].is_string()) next = p[field];
    }
    if (next.empty() || (p.contains("has_more") && !p["has_more"].get<bool>())) break;
    cursor = next;
  }
  return n;
}

}  // namespace

TEST_CASE("apply and destroy of 1 network + 300 instances with --max-pending 50 finish") {
  ServeFixture server({"--provision-delay", "200ms"});
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", NetworkAndInstances(300));
  std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  // About 300 / 50 rounds of 200 ms (and the watcher's overshoot): seconds.
  // The limit is far beyond that, and only ends a hang.
  constexpr std::chrono::seconds kLimit{180};

  auto apply = RunWithin({"apply", stack, "--auto-approve", "--max-pending", "50"}, env, kLimit);
  INFO(apply.out.substr(apply.out.size() > 2000 ? apply.out.size() - 2000 : 0) << apply.err);
  REQUIRE_FALSE(apply.timed_out);
  REQUIRE(apply.exit_code == 0);
  CHECK(
      apply.out.find("Apply complete! Resources: 301 added, 0 changed, 0 replaced, 0 destroyed.") !=
      std::string::npos);
  CHECK(Count(server, "/api/v1/compute") == 300);
  CHECK(Count(server, "/api/v1/networking") == 1);
  // The state holds them all: nothing left to do.
  auto again = RunWithin({"plan", stack, "--detailed-exitcode"}, env, kLimit);
  CHECK(again.exit_code == 0);

  auto destroy =
      RunWithin({"destroy", stack, "--auto-approve", "--max-pending", "50"}, env, kLimit);
  INFO(destroy.out.substr(destroy.out.size() > 2000 ? destroy.out.size() - 2000 : 0)
       << destroy.err);
  REQUIRE_FALSE(destroy.timed_out);
  REQUIRE(destroy.exit_code == 0);
  CHECK(Count(server, "/api/v1/compute") == 0);
  CHECK(Count(server, "/api/v1/networking") == 0);
}

}  // namespace max_pending_test
