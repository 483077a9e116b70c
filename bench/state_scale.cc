// State at scale benchmark (issue 33): what one apply's fixed costs on the
// state are when the state already records N resources. The state is made
// once (N resources of ~1 KiB of attributes, each depending on one network,
// committed 1,000 at a time), outside the figures; then each run, on a
// handle of its own, as a command does:
//   open      OpenStateStore of the existing state (what every command does);
//   lock      Lock("apply") of the free state;
//   reserve   ReserveSequences(1);
//   journal   JournalBegin of one entry (durable);
//   commit    Commit of ONE changed resource completing that entry,
//             Durability::kDeferred: how an apply records one result;
//   commit!   Commit of one changed resource, Durability::kImmediate (a
//             `state mv`, a result whose API cannot replay by key);
//   sync      Sync() (what an apply calls about once a second);
//   unlock    Unlock;
//   close     the handle's destruction (SQLite checkpoints its WAL there);
//   load      Load() of the whole state (every record read and parsed: what
//             plan and apply read once per run), in the first --load-runs runs.
// Every figure is the median (and the maximum) over --runs runs, in ms,
// after one run not counted (a warm-up, without load).
//
// Usage: state_scale [--resources N (default 100000)] [--runs R (default 11)]
//                    [--load-runs L (default 3)] [--key] [--each]
//                    [--postgres-url-env VAR]
//   --key                  the state encrypted at rest (a random 256-bit key, HKDF)
//   --each                 every figure printed (stderr) as it is taken
//   --postgres-url-env VAR the PostgreSQL store at the URL in $VAR (under
//                          tests/engine/state/pg_harness.sh: CAIRN_TEST_PG_URL),
//                          besides SQLite
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/state/open_state_store.h"
#include "tests/support/process.h"

namespace {

using namespace cairn;
using ScaleClock = std::chrono::steady_clock;

double ScaleMs(ScaleClock::time_point since) {
  return std::chrono::duration<double, std::milli>(ScaleClock::now() - since).count();
}

[[noreturn]] void ScaleDie(const std::string& what, const Status& st) {
  std::fprintf(stderr, "state_scale: %s: %s\n", what.c_str(), st.ToString().c_str());
  std::exit(1);
}

ResourceState ScaleResource(int i, const std::string& filler, int version) {
  ResourceState r;
  r.address = "instance.r[" + std::to_string(i) + "]";
  r.kind = "instance";
  r.id = "inst-" + std::to_string(i);
  r.attributes = {{"name", "r" + std::to_string(i)},
                  {"user_data", filler},
                  {"n", i},
                  {"version", version},
                  {"network_id", "net-1"}};
  r.depends_on = {"network.main"};
  return r;
}

// Figures by step, in the order printed.
const char* const kScaleSteps[] = {"open",    "lock", "reserve", "journal", "commit",
                                   "commit!", "sync", "unlock",  "close",   "load"};

struct ScaleFigures {
  std::map<std::string, std::vector<double>> ms;
  bool each = false;  // --each: every figure printed as it is taken
  void Add(const char* step, double v) {
    ms[step].push_back(v);
    if (each) std::fprintf(stderr, "  %s %.2f\n", step, v);
  }
};

void ScaleRun(const std::string& stack_root, const BackendSpec& spec, int resources, int run,
              bool with_load, ScaleFigures& out) {
  const std::string filler(1000, 'y');
  auto t = ScaleClock::now();
  auto store = OpenStateStore(stack_root, spec);
  if (!store.ok()) ScaleDie("open", store.status());
  out.Add("open", ScaleMs(t));
  StateStore& s = **store;

  t = ScaleClock::now();
  auto lock = s.Lock("apply", std::chrono::milliseconds(0));
  if (!lock.ok()) ScaleDie("lock", lock.status());
  out.Add("lock", ScaleMs(t));

  t = ScaleClock::now();
  auto seq = s.ReserveSequences(1);
  if (!seq.ok()) ScaleDie("reserve", seq.status());
  out.Add("reserve", ScaleMs(t));

  // A different resource each run, spread over the whole state.
  const int target = static_cast<int>((static_cast<int64_t>(run) * 7919 + 13) % resources);
  JournalEntry e;
  e.seq = *seq;
  e.address = "instance.r[" + std::to_string(target) + "]";
  e.action = Action::kUpdate;
  e.kind = "instance";
  e.remote_id = "inst-" + std::to_string(target);
  e.method = "PATCH";
  e.path = "/v1/instances/" + e.remote_id;
  e.body = R"({"size":"large"})";
  e.idempotency_key = "cairn-bench-" + std::to_string(*seq);
  e.started_at = 1700000000;
  t = ScaleClock::now();
  if (Status st = s.JournalBegin(e); !st.ok()) ScaleDie("journal", st);
  out.Add("journal", ScaleMs(t));

  StateCommit c;
  c.put.push_back(ScaleResource(target, filler, run + 1));
  c.journal_done = *seq;
  c.durability = Durability::kDeferred;
  t = ScaleClock::now();
  auto serial = s.Commit(c);
  if (!serial.ok()) ScaleDie("commit", serial.status());
  out.Add("commit", ScaleMs(t));

  StateCommit now;
  now.put.push_back(ScaleResource((target + 1) % resources, filler, run + 1));
  t = ScaleClock::now();
  auto serial2 = s.Commit(now);
  if (!serial2.ok()) ScaleDie("commit!", serial2.status());
  out.Add("commit!", ScaleMs(t));
  if (*serial2 != *serial + 1) ScaleDie("commit!", Status::Internal("serial not bumped by one"));

  // Something to sync: another deferred result.
  StateCommit later;
  later.put.push_back(ScaleResource((target + 2) % resources, filler, run + 1));
  later.durability = Durability::kDeferred;
  if (auto st = s.Commit(later); !st.ok()) ScaleDie("commit", st.status());
  t = ScaleClock::now();
  if (Status st = s.Sync(); !st.ok()) ScaleDie("sync", st);
  out.Add("sync", ScaleMs(t));

  t = ScaleClock::now();
  if (Status st = s.Unlock(lock->id); !st.ok()) ScaleDie("unlock", st);
  out.Add("unlock", ScaleMs(t));

  if (with_load) {
    t = ScaleClock::now();
    auto snap = s.Load();
    if (!snap.ok()) ScaleDie("load", snap.status());
    out.Add("load", ScaleMs(t));
    if (snap->resources.size() != static_cast<size_t>(resources)) {
      ScaleDie("load",
               Status::Internal("wrong resource count " + std::to_string(snap->resources.size())));
    }
  }

  t = ScaleClock::now();
  store->reset();
  out.Add("close", ScaleMs(t));
}

void ScaleFill(const std::string& stack_root, const BackendSpec& spec, int resources) {
  const std::string filler(1000, 'x');
  auto store = OpenStateStore(stack_root, spec);
  if (!store.ok()) ScaleDie("fill: open", store.status());
  constexpr int kBatch = 1000;
  for (int first = 0; first < resources; first += kBatch) {
    StateCommit c;
    c.durability = Durability::kDeferred;
    for (int i = first; i < std::min(resources, first + kBatch); ++i) {
      c.put.push_back(ScaleResource(i, filler, 0));
    }
    if (auto st = (*store)->Commit(c); !st.ok()) ScaleDie("fill: commit", st.status());
  }
  if (Status st = (*store)->Sync(); !st.ok()) ScaleDie("fill: sync", st);
}

void ScalePrint(const char* backend, const ScaleFigures& f) {
  std::printf("%-12s", backend);
  for (const char* step : kScaleSteps) {
    auto it = f.ms.find(step);
    if (it == f.ms.end() || it->second.empty()) {
      std::printf(" %15s", "-");
      continue;
    }
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    char cell[64];
    std::snprintf(cell, sizeof cell, "%.2f/%.2f", v[v.size() / 2], v.back());
    std::printf(" %15s", cell);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int resources = 100000, runs = 11, load_runs = 3;
  bool key = false, each = false;
  std::string pg_env;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--resources") == 0 && has_value) {
      resources = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--runs") == 0 && has_value) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--load-runs") == 0 && has_value) {
      load_runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--postgres-url-env") == 0 && has_value) {
      pg_env = argv[++i];
    } else if (std::strcmp(argv[i], "--key") == 0) {
      key = true;
    } else if (std::strcmp(argv[i], "--each") == 0) {
      each = true;
    } else {
      std::fprintf(stderr, "state_scale: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (resources < 3 || runs < 1) {
    std::fprintf(stderr, "state_scale: --resources >= 3 and --runs >= 1\n");
    return 2;
  }
  StateEncryptionSpec encryption;
  if (key) {
    ::setenv("CAIRN_BENCH_STATE_KEY",
             "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0", 1);
    encryption.key = StateKeySource{"CAIRN_BENCH_STATE_KEY", ""};
  }
  std::printf("state_scale: %d resources%s, %d runs (load: %d), ms median/max\n", resources,
              key ? ", encrypted" : "", runs, load_runs);
  std::printf("%-12s", "backend");
  for (const char* step : kScaleSteps) std::printf(" %15s", step);
  std::printf("\n");

  cairn::testing::TempDir dir;
  // Fills a state of `resources` on `spec`'s backend, then measures it.
  auto measure = [&](const BackendSpec& spec, const char* name) {
    auto t = ScaleClock::now();
    ScaleFill(dir.path(), spec, resources);
    std::fprintf(stderr, "state_scale: %s state of %d made in %.1f s\n", name, resources,
                 ScaleMs(t) / 1000);
    ScaleFigures warm_up, f;
    ScaleRun(dir.path(), spec, resources, runs, /*with_load=*/false, warm_up);
    f.each = each;
    for (int run = 0; run < runs; ++run) {
      ScaleRun(dir.path(), spec, resources, run, run < load_runs, f);
    }
    ScalePrint(name, f);
  };
  {
    BackendSpec spec;
    spec.encryption = encryption;
    measure(spec, "sqlite");
  }
  if (!pg_env.empty()) {
    BackendSpec spec;
    spec.type = "postgres";
    spec.url_env = pg_env;
    spec.stack_name = "bench-scale-" + std::to_string(resources) + "-" + std::to_string(getpid());
    spec.encryption = encryption;
    measure(spec, "postgres");
  }
  return 0;
}
