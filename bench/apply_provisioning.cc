// Benchmark (issue 12): apply and destroy at the speed of provisioning.
//
// Against a local `cairn serve --provision-delay D` (default 1s), a stack of
// one network and N instances on it (N from --sizes, default 200,1000) is
// applied, then destroyed, with `cairn apply|destroy --auto-approve` at the
// default parallelism, each on a fresh server. Printed per N and command:
//   - the wall time, and its ratio to the physical limit: the depth of the
//     graph (2: the network, then the instances) times the lifecycle steps
//     each level takes (create: queued -> provisioning -> running, 2 steps;
//     delete: deleting -> deleted, 1 step) times D;
//   - the HTTP requests the command made (the server's /metrics, the plan's
//     refresh included), per resource.
// Goals: within 1.5x of the limit at N = 200 and 2x at N = 1,000; under 2
// requests per resource. --runs R measures each R times and prints the
// median with every run. Bounded: every command runs under timeout(1).
//
// Also printed: the peak RSS of each command (/usr/bin/time), in MB.
// --flags "ARGS" passes ARGS (split at spaces, e.g. "--max-pending 20000")
// to both commands. --cairn may be given several times, comma-separated
// (e.g. a build of main and one of a branch): each run then measures every
// binary in turn, so that the load of a shared machine hits them alike.
//
// Usage: apply_provisioning [--cairn PATH[,PATH...]] [--sizes 200,1000] [--delay 1s] [--runs 1]
//                           [--flags "ARGS"]
// PATH defaults to ../cli/cairn next to this executable.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/support/local_server.h"
#include "tests/support/process.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::bench::Die;
using cairn::bench::kToken;
using cairn::bench::LocalServer;
using cairn::bench::RequestCounter;
using cairn::testing::RunCommand;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

std::string StackYaml(int instances) {
  return "kind: network\nname: net\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: " +
         std::to_string(instances) +
         "\nspec:\n  name: web-${count.index}\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
         "  image: debian-12\n  network: ${network.net.id}\n";
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Join(const std::vector<double>& v, int precision) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(precision);
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str();
}

struct Measured {
  double seconds = 0;
  long requests = 0;
  double peak_mb = 0;
};

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

Measured Run(const std::string& cairn, LocalServer& server, const std::string& command,
             const std::string& stack, const std::vector<std::string>& flags,
             const std::string& dir) {
  RequestCounter counter{server};
  const std::string rss_file = dir + "/rss-" + command;
  std::vector<std::string> argv = {
      "/usr/bin/time", "-f",  "%M",  "-o",    rss_file, "/usr/bin/timeout",
      "--signal=KILL", "900", cairn, command, stack,    "--auto-approve"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto start = Clock::now();
  auto r = RunCommand(
      argv, {{"CAIRN_ENDPOINT", server.endpoint()}, {"CAIRN_TOKEN", kToken}, {"NO_COLOR", "1"}});
  Measured m{std::chrono::duration<double>(Clock::now() - start).count(), counter.Made()};
  if (r.exit_code != 0) Die("cairn " + command + " failed: " + r.err.substr(0, 2000));
  std::ifstream rss(rss_file);
  long kb = 0;
  for (std::string line; std::getline(rss, line);) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) kb = std::stol(line);
  }
  m.peak_mb = kb / 1024.0;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> binaries = {
      (std::filesystem::path(argv[0]).parent_path() / ".." / "cli" / "cairn").string()};
  std::vector<std::string> flags;
  std::vector<int> sizes = {200, 1000};
  std::string delay = "1s";
  int runs = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cairn") {
      binaries = Split(value, ',');
    } else if (flag == "--flags") {
      flags = Split(value, ' ');
    } else if (flag == "--sizes") {
      sizes.clear();
      std::istringstream in(value);
      for (std::string part; std::getline(in, part, ',');) sizes.push_back(std::stoi(part));
    } else if (flag == "--delay") {
      delay = value;
    } else if (flag == "--runs") {
      runs = std::max(1, std::stoi(value));
    } else {
      std::cerr << "usage: apply_provisioning [--cairn PATH] [--sizes 200,1000] [--delay 1s] "
                   "[--runs 1] [--flags \"ARGS\"]\n";
      return 2;
    }
  }
  const double delay_s =
      delay.back() == 's' && delay.size() > 2 && delay[delay.size() - 2] == 'm'
          ? std::stod(delay.substr(0, delay.size() - 2)) / 1000
          : std::stod(delay.substr(0, delay.size() - (delay.back() == 's' ? 1 : 0)));
  try {
    std::printf(
        "apply and destroy of 1 network + N instances, cairn serve --provision-delay %s, "
        "default parallelism, %d run(s) each\n",
        delay.c_str(), runs);
    std::string flag_text;
    for (const auto& f : flags) flag_text += " " + f;
    if (!flag_text.empty()) std::printf("flags:%s\n", flag_text.c_str());
    for (int n : sizes) {
      struct Series {
        std::vector<double> apply_s, destroy_s, apply_rq, destroy_rq, apply_mb, destroy_mb;
      };
      std::vector<Series> series(binaries.size());
      for (int run = 0; run < runs; ++run) {
        for (size_t b = 0; b < binaries.size(); ++b) {
          const std::string& cairn = binaries[b];
          TempDir dir;
          LocalServer server(cairn, dir.path() + "/data", delay);
          std::string stack = dir.path() + "/stack";
          WriteFile(stack + "/main.yaml", StackYaml(n));
          Measured a = Run(cairn, server, "apply", stack, flags, dir.path());
          Measured d = Run(cairn, server, "destroy", stack, flags, dir.path());
          Series& s = series[b];
          s.apply_s.push_back(a.seconds);
          s.destroy_s.push_back(d.seconds);
          s.apply_rq.push_back(static_cast<double>(a.requests) / (n + 1));
          s.destroy_rq.push_back(static_cast<double>(d.requests) / (n + 1));
          s.apply_mb.push_back(a.peak_mb);
          s.destroy_mb.push_back(d.peak_mb);
        }
      }
      const double apply_limit = 2 * 2 * delay_s, destroy_limit = 2 * 1 * delay_s;
      for (size_t b = 0; b < binaries.size(); ++b) {
        const Series& s = series[b];
        std::printf("N = %d, %s\n", n, binaries[b].c_str());
        std::printf(
            "  apply:   %.2f s (runs: %s), %.2fx the limit of %.1f s, %.2f requests per "
            "resource (runs: %s), peak RSS %.0f MB (runs: %s)\n",
            Median(s.apply_s), Join(s.apply_s, 2).c_str(), Median(s.apply_s) / apply_limit,
            apply_limit, Median(s.apply_rq), Join(s.apply_rq, 2).c_str(), Median(s.apply_mb),
            Join(s.apply_mb, 0).c_str());
        std::printf(
            "  destroy: %.2f s (runs: %s), %.2fx the limit of %.1f s, %.2f requests per "
            "resource (runs: %s), peak RSS %.0f MB (runs: %s)\n",
            Median(s.destroy_s), Join(s.destroy_s, 2).c_str(), Median(s.destroy_s) / destroy_limit,
            destroy_limit, Median(s.destroy_rq), Join(s.destroy_rq, 2).c_str(),
            Median(s.destroy_mb), Join(s.destroy_mb, 0).c_str());
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::cerr << "apply_provisioning: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
