// Benchmark (issue 31): what `cairn watch` costs. S stacks of R resources
// each (one network and R - 1 instances on it), applied against a local
// `cairn serve`; then one `cairn watch` of all of them at an interval,
// sampled every --sample: the requests the server answered (per minute,
// and per stack run), the runs made, and the watcher's resident memory,
// from its first sample to its last (steady, or growing).
//
// Usage: watch_load [--cairn PATH] [--stacks 100] [--resources 100]
//                   [--interval 60s] [--duration 10m] [--sample 60s] [--threads 4]
// PATH defaults to ../cli/cairn next to this executable.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/duration.h"
#include "bench/support/local_server.h"
#include "tests/support/process.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::bench::Die;
using cairn::bench::kToken;
using cairn::bench::LocalServer;
using cairn::testing::ChildProcess;
using cairn::testing::RunCommand;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

// Stack `s`: one network and `total - 1` instances on it.
void WriteWatchStack(const std::string& dir, int s, int total) {
  const std::string p = "w" + std::to_string(s) + "-";
  std::string text = "kind: network\nname: n0\nspec:\n  name: " + p +
                     "n0\n  region: eu-central\n  cidr: 10.0.0.0/16\n";
  for (int i = 0; i + 1 < total; ++i) {
    text += "---\nkind: instance\nname: i" + std::to_string(i) + "\nspec:\n  name: " + p + "i" +
            std::to_string(i) +
            "\n  region: eu-central\n  plan: s-1vcpu-1gb\n  image: debian-12\n"
            "  network: ${network.n0.id}\n";
  }
  WriteFile(dir + "/main.yaml", text);
}

// Resident memory of `pid` in MB (VmRSS), 0 when it cannot be read.
double RssMb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// The sum of the samples named `name` on a /metrics page.
double MetricTotal(const std::string& body, const std::string& name) {
  double total = 0;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

std::chrono::milliseconds Duration(const std::string& flag, const std::string& text) {
  auto d = cairn::ParseDuration(text);
  if (!d.ok()) Die(flag + ": " + d.status().message());
  return *d;
}

int Run(int argc, char** argv) {
  std::string cairn =
      (std::filesystem::path(argv[0]).parent_path() / ".." / "cli" / "cairn").string();
  int stacks = 100, resources = 100, threads = 4;
  std::string interval = "60s", duration = "10m", sample = "60s";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cairn")
      cairn = value;
    else if (flag == "--stacks")
      stacks = std::stoi(value);
    else if (flag == "--resources")
      resources = std::stoi(value);
    else if (flag == "--interval")
      interval = value;
    else if (flag == "--duration")
      duration = value;
    else if (flag == "--sample")
      sample = value;
    else if (flag == "--threads")
      threads = std::stoi(value);
    else
      Die("unknown flag " + flag);
  }
  const auto run_for = Duration("--duration", duration);
  const auto every = Duration("--sample", sample);
  TempDir work;
  LocalServer server(cairn, work.path() + "/serve");
  const std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", server.endpoint()}, {"CAIRN_TOKEN", kToken}, {"NO_COLOR", "1"}};
  std::vector<std::string> dirs;
  const auto setup = Clock::now();
  for (int s = 0; s < stacks; ++s) {
    const std::string dir = work.path() + "/s" + std::to_string(s);
    WriteWatchStack(dir, s, resources);
    auto r = RunCommand({cairn, "apply", dir, "--auto-approve"}, env);
    if (r.exit_code != 0) Die("apply of " + dir + " failed: " + r.err);
    dirs.push_back(dir);
  }
  std::printf("watch_load: %d stacks of %d resources applied in %.1f s\n", stacks, resources,
              std::chrono::duration<double>(Clock::now() - setup).count());

  std::vector<std::string> args = {
      cairn,      "watch",       "--interval", interval,
      "--listen", "127.0.0.1:0", "--threads",  std::to_string(threads)};
  args.insert(args.end(), dirs.begin(), dirs.end());
  ChildProcess watch(args, env);
  std::string address;
  for (int i = 0; i < 600 && address.empty(); ++i) {
    const std::string err = watch.Stderr();
    const size_t at = err.find("listening on http://");
    if (at != std::string::npos) {
      address = err.substr(at + 20, err.find(' ', at + 20) - at - 20);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (address.empty()) Die("cairn watch did not start: " + watch.Stderr());
  cairn::CurlTransport http;
  auto scrape = [&]() {
    auto r = http.Send({"GET",
                        "http://" + address + "/metrics",
                        {},
                        "",
                        std::chrono::seconds(10),
                        std::chrono::seconds(5)},
                       {});
    if (!r.ok() || r->status != 200) Die("GET /metrics of cairn watch failed");
    return r->body;
  };
  std::printf("%8s %10s %10s %12s %10s\n", "minute", "runs", "requests", "requests/min", "rss MB");
  const auto start = Clock::now();
  const long requests_at_start = server.ResponsesSoFar();
  double first_rss = 0, last_rss = 0, max_rss = 0, runs = 0;
  long requests = 0;
  for (auto next = start + every; next <= start + run_for; next += every) {
    std::this_thread::sleep_until(next);
    const std::string metrics = scrape();
    runs = MetricTotal(metrics, "cairn_watch_runs_total");
    // Minus this benchmark's own scrapes of the server (one per sample).
    requests = server.ResponsesSoFar() - requests_at_start;
    const double minutes = std::chrono::duration<double>(Clock::now() - start).count() / 60;
    const double rss = RssMb(watch.pid());
    if (first_rss == 0) first_rss = rss;
    last_rss = rss;
    max_rss = std::max(max_rss, rss);
    std::printf("%8.1f %10.0f %10ld %12.0f %10.1f\n", minutes, runs, requests, requests / minutes,
                rss);
    std::fflush(stdout);
  }
  const double minutes = std::chrono::duration<double>(Clock::now() - start).count() / 60;
  std::printf(
      "watch_load: %d stacks x %d resources, interval %s, %.1f min: %.0f runs, %ld requests "
      "(%.0f/min, %.2f per stack run; 2 kinds per stack), rss %.1f MB at the first sample, "
      "%.1f MB at the last, %.1f MB at most\n",
      stacks, resources, interval.c_str(), minutes, runs, requests, requests / minutes,
      runs > 0 ? requests / runs : 0.0, first_rss, last_rss, max_rss);
  watch.Signal(SIGTERM);
  if (watch.Wait(std::chrono::seconds(120)) != 0) Die("cairn watch did not stop cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const cairn::bench::BenchFailure& e) {
    std::fprintf(stderr, "watch_load: %s\n", e.what());
    return 1;
  }
}
