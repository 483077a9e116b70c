// State store benchmark (issue 32): what encryption at rest costs the SQLite
// state. For each mode (plaintext; a random 256-bit key, HKDF; a passphrase,
// PBKDF2 600,000 iterations) in a fresh directory:
//   open     SqliteStateStore::Open of a new state (derives the key);
//   commit   N commits of one resource each (attributes of ~1 KiB), kDeferred
//            as an apply's results are, then one Sync();
//   reopen   Open of the existing state of N resources;
//   load     Load() of the N resources;
//   rekey    Rekey() of the N resources under the same key (encrypted modes):
//            every record opened and sealed again, as a rotation does.
// Every figure is the median of --runs runs (default 5), in milliseconds.
//
// Usage: state_store [--resources N (default 2000)] [--runs R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/state/sqlite_state_store.h"
#include "tests/support/process.h"

namespace {

using namespace cairn;
using BenchClock = std::chrono::steady_clock;

double StateBenchMs(BenchClock::time_point since) {
  return std::chrono::duration<double, std::milli>(BenchClock::now() - since).count();
}

double StateBenchMedian(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void StateBenchDie(const std::string& what, const Status& st) {
  std::fprintf(stderr, "state_store: %s: %s\n", what.c_str(), st.ToString().c_str());
  std::exit(1);
}

struct StateBenchMode {
  const char* name;
  const char* key;  // nullptr: plaintext
};

}  // namespace

int main(int argc, char** argv) {
  int resources = 2000, runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--resources") == 0) resources = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  const std::string filler(1000, 'x');
  const StateBenchMode modes[] = {
      {"plaintext", nullptr},
      {"key (HKDF)", "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"},
      {"passphrase (PBKDF2)", "correct horse battery staple, twice over"},
  };
  std::printf("state_store: %d resources, median of %d runs, ms\n", resources, runs);
  std::printf("%-22s %9s %9s %9s %9s %9s\n", "mode", "open", "commit", "reopen", "load", "rekey");
  for (const StateBenchMode& mode : modes) {
    std::vector<double> open, commit, reopen, load, rekey;
    SqliteStateOptions options;
    if (mode.key) {
      ::setenv("CAIRN_BENCH_STATE_KEY", mode.key, 1);
      options.encryption.key = StateKeySource{"CAIRN_BENCH_STATE_KEY", ""};
    }
    for (int run = 0; run < runs; ++run) {
      cairn::testing::TempDir dir;
      const std::string path = dir.path() + "/state.db";
      auto t = BenchClock::now();
      auto store = SqliteStateStore::Open(path, options);
      if (!store.ok()) StateBenchDie("open", store.status());
      open.push_back(StateBenchMs(t));
      t = BenchClock::now();
      for (int i = 0; i < resources; ++i) {
        StateCommit c;
        ResourceState r;
        r.address = "instance.r[" + std::to_string(i) + "]";
        r.kind = "instance";
        r.id = "inst-" + std::to_string(i);
        r.attributes = {{"name", "r" + std::to_string(i)}, {"user_data", filler}, {"n", i}};
        c.put.push_back(std::move(r));
        c.durability = Durability::kDeferred;
        if (auto s = (*store)->Commit(c); !s.ok()) StateBenchDie("commit", s.status());
      }
      if (Status s = (*store)->Sync(); !s.ok()) StateBenchDie("sync", s);
      commit.push_back(StateBenchMs(t));
      store->reset();
      t = BenchClock::now();
      auto again = SqliteStateStore::Open(path, options);
      if (!again.ok()) StateBenchDie("reopen", again.status());
      reopen.push_back(StateBenchMs(t));
      t = BenchClock::now();
      auto snap = (*again)->Load();
      if (!snap.ok()) StateBenchDie("load", snap.status());
      if (snap->resources.size() != static_cast<size_t>(resources)) {
        StateBenchDie("load", Status::Internal("wrong resource count"));
      }
      load.push_back(StateBenchMs(t));
      again->reset();
      if (mode.key) {
        // Every record read and sealed again (what a rotation costs).
        SqliteStateOptions for_rekey = options;
        for_rekey.for_rekey = true;
        auto rk = SqliteStateStore::Open(path, for_rekey);
        if (!rk.ok()) StateBenchDie("rekey open", rk.status());
        t = BenchClock::now();
        auto r = (*rk)->Rekey();
        if (!r.ok()) StateBenchDie("rekey", r.status());
        rekey.push_back(StateBenchMs(t));
      }
    }
    std::printf("%-22s %9.1f %9.1f %9.1f %9.1f %9s\n", mode.name, StateBenchMedian(open),
                StateBenchMedian(commit), StateBenchMedian(reopen), StateBenchMedian(load),
                rekey.empty() ? "-" : std::to_string(StateBenchMedian(rekey)).substr(0, 7).c_str());
  }
  return 0;
}
