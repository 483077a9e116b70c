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
// Usage: apply_provisioning [--cairn PATH] [--sizes 200,1000] [--delay 1s] [--runs 1]
// PATH defaults to ../cli/cairn next to this executable.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
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
};

Measured Run(const std::string& cairn, LocalServer& server, const std::string& command,
             const std::string& stack) {
  RequestCounter counter{server};
  auto start = Clock::now();
  auto r = RunCommand(
      {"/usr/bin/timeout", "--signal=KILL", "900", cairn, command, stack, "--auto-approve"},
      {{"CAIRN_ENDPOINT", server.endpoint()}, {"CAIRN_TOKEN", kToken}, {"NO_COLOR", "1"}});
  Measured m{std::chrono::duration<double>(Clock::now() - start).count(), counter.Made()};
  if (r.exit_code != 0) Die("cairn " + command + " failed: " + r.err.substr(0, 2000));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cairn =
      (std::filesystem::path(argv[0]).parent_path() / ".." / "cli" / "cairn").string();
  std::vector<int> sizes = {200, 1000};
  std::string delay = "1s";
  int runs = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cairn") {
      cairn = value;
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
                   "[--runs 1]\n";
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
    for (int n : sizes) {
      std::vector<double> apply_s, destroy_s, apply_rq, destroy_rq;
      for (int run = 0; run < runs; ++run) {
        TempDir dir;
        LocalServer server(cairn, dir.path() + "/data", delay);
        std::string stack = dir.path() + "/stack";
        WriteFile(stack + "/main.yaml", StackYaml(n));
        Measured a = Run(cairn, server, "apply", stack);
        Measured d = Run(cairn, server, "destroy", stack);
        apply_s.push_back(a.seconds);
        destroy_s.push_back(d.seconds);
        apply_rq.push_back(static_cast<double>(a.requests) / (n + 1));
        destroy_rq.push_back(static_cast<double>(d.requests) / (n + 1));
      }
      const double apply_limit = 2 * 2 * delay_s, destroy_limit = 2 * 1 * delay_s;
      std::printf("N = %d\n", n);
      std::printf(
          "  apply:   %.2f s (runs: %s), %.2fx the limit of %.1f s, %.2f requests per "
          "resource (runs: %s)\n",
          Median(apply_s), Join(apply_s, 2).c_str(), Median(apply_s) / apply_limit, apply_limit,
          Median(apply_rq), Join(apply_rq, 2).c_str());
      std::printf(
          "  destroy: %.2f s (runs: %s), %.2fx the limit of %.1f s, %.2f requests per "
          "resource (runs: %s)\n",
          Median(destroy_s), Join(destroy_s, 2).c_str(), Median(destroy_s) / destroy_limit,
          destroy_limit, Median(destroy_rq), Join(destroy_rq, 2).c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::cerr << "apply_provisioning: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
