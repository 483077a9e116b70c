// Chaos soak: cycles of `cairn apply` and `cairn destroy` of the crash stack
// (tests/cli/support/live_inventory.h) against a `cairn serve --faults`
// (500s, 503s, 429s, dropped connections before and after executing, slow
// provisioning), while, at random moments, the command is SIGKILLed, the
// server is kill -9'd and restarted on its data, or both. After each cycle
// the command is run again until it succeeds; then, through the API (a
// server without faults, on the same data): every desired resource exists
// exactly once after an apply, nothing at all after a destroy (nothing
// orphaned), and the state matches the API (a plan has nothing to do).
//
// CAIRN_SOAK_CYCLES sets the number of apply+destroy cycles (default 3, the
// short form ctest runs); CAIRN_SOAK_SEED the seed (default random; printed).
// bench/chaos_soak.sh runs the long form and prints the counts.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "tests/cli/support/live_inventory.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace chaos_soak_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

constexpr const char* kFaults =
    "error500=0.04,error503=0.03,error429=0.02,drop_before=0.03,drop_after=0.04,"
    "provision_retrying=0.2,provision_delayed=0.2,reconcile=0.1";

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// A `cairn serve` on a fixed port and data directory, killed with -9 and
// started again at will.
class Server {
 public:
  Server() : data_(dir_.path() + "/data") {}
  void Start(bool faults, unsigned seed) {
    std::vector<std::string> argv = {CairnBinary(),       "serve", "--listen",    listen_,
                                     "--data-dir",        data_,   "--dev-token", kDevToken,
                                     "--provision-delay", "40ms"};
    if (faults)
      argv.insert(argv.end(), {"--faults", std::string(kFaults) + ",seed=" + std::to_string(seed)});
    std::map<std::string, std::string> env;
    if (ServeFixture::OnPostgres()) {
      argv.insert(argv.end(), {"--store", "postgres"});
      env["CAIRN_SERVE_PG_URL"] = ServeFixture::DatabaseFor(data_);
    }
    proc_ = std::make_unique<ChildProcess>(argv, env);
    auto line = proc_->ReadLine(std::chrono::seconds(30));
    INFO("stderr: " << proc_->Stderr());
    REQUIRE(line.has_value());
    const std::string prefix = "listening on http://";
    REQUIRE(line->rfind(prefix, 0) == 0);
    base_ = "http://" + line->substr(prefix.size());
    listen_ = line->substr(prefix.size());  // the same port on every restart
  }
  void Kill() {
    proc_->Signal(SIGKILL);
    proc_->Wait();
  }
  const std::string& base() const { return base_; }

 private:
  TempDir dir_;
  std::string data_;
  std::string listen_ = "127.0.0.1:0";
  std::string base_;
  std::unique_ptr<ChildProcess> proc_;
};

struct Counts {
  int runs = 0, command_kills = 0, server_kills = 0, finishing_runs = 0, checks = 0,
      resources_checked = 0, duplicates = 0, orphans = 0;
};

}  // namespace

TEST_CASE("chaos soak: apply and destroy against a faulty server, both sides killed at random") {
  const int cycles = EnvInt("CAIRN_SOAK_CYCLES", 3);
  const unsigned seed = static_cast<unsigned>(EnvInt("CAIRN_SOAK_SEED", std::random_device{}()));
  INFO("seed " << seed << " (CAIRN_SOAK_SEED reproduces the kill schedule)");
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(0, 1200);
  std::uniform_int_distribution<int> victim(0, 3);  // none, command, server, both

  Server server;
  server.Start(/*faults=*/true, seed);
  TempDir stack;
  WriteFile(stack.path() + "/main.yaml", CrashStackYaml());
  auto env = [&] {
    return std::map<std::string, std::string>{
        {"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  };
  Counts n;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    for (const std::string command : {"apply", "destroy"}) {
      const int ms = delay_ms(rng);
      const int who = victim(rng);
      INFO("cycle " << cycle << ": " << command << ", victim " << who << " after " << ms << " ms");
      {
        ChildProcess child({CairnBinary(), command, stack.path(), "--auto-approve"}, env());
        ++n.runs;
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        if (who & 1) {
          child.Signal(SIGKILL);
          ++n.command_kills;
        }
        if (who & 2) {
          server.Kill();
          ++n.server_kills;
          server.Start(/*faults=*/true, seed + static_cast<unsigned>(n.server_kills));
        }
        child.Wait(std::chrono::seconds(120));  // ends by itself, or is killed after that
      }
      // Run again until it succeeds: an injected fault may fail a run
      // (retries exhausted), never the outcome.
      CommandResult done;
      for (int attempt = 0; attempt < 8; ++attempt) {
        done = RunCairn({command, stack.path(), "--auto-approve"}, env());
        ++n.finishing_runs;
        if (done.exit_code == 0) break;
      }
      INFO("last run: exit " << done.exit_code << "\n" << done.out << done.err);
      REQUIRE(done.exit_code == 0);

      // Checked through a server without faults, on the same data.
      server.Kill();
      server.Start(/*faults=*/false, seed);
      auto client = std::make_unique<HttpClient>(server.base(), kDevToken);
      Inventory live = LiveInventory(*client);
      const Inventory want = command == "apply" ? CrashStackInventory() : EmptyInventory();
      INFO("live:\n" << Describe(live));
      for (const auto& [collection, names] : live) {
        n.resources_checked += static_cast<int>(names.size());
        const auto& wanted = want.at(collection);
        for (size_t i = 1; i < names.size(); ++i) n.duplicates += names[i] == names[i - 1];
        for (const auto& name : names) {
          n.orphans += std::find(wanted.begin(), wanted.end(), name) == wanted.end();
        }
      }
      CHECK(live == want);
      if (command == "apply") {
        CheckCrashStackWiring(*client);
        auto plan = RunCairn({"plan", stack.path(), "--detailed-exitcode"}, env());
        INFO("plan: " << plan.out << plan.err);
        CHECK(plan.exit_code == 0);  // the state matches the API
      } else {
        auto list = RunCairn({"state", "list", stack.path()}, env());
        INFO("state list: " << list.out << list.err);
        CHECK(list.exit_code == 0);
        CHECK(list.out.empty());  // the state tracks nothing
      }
      ++n.checks;
      server.Kill();
      server.Start(/*faults=*/true, seed + 1000u + static_cast<unsigned>(n.checks));
    }
  }
  CHECK(n.duplicates == 0);
  CHECK(n.orphans == 0);
  std::cout << "chaos soak (seed " << seed << "): " << cycles << " cycles, " << n.runs
            << " interrupted runs + " << n.finishing_runs << " finishing runs; killed: command "
            << n.command_kills << ", server " << n.server_kills << "; " << n.checks << " checks of "
            << n.resources_checked << " live resources: duplicates " << n.duplicates << ", orphans "
            << n.orphans << "\n";
}

}  // namespace chaos_soak_test
