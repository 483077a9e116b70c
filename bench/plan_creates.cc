// Benchmark (issue 33): `cairn plan` of N creates against a local `cairn
// serve`, the real binary as users run it, saved (`--out FILE`: to a new
// file, "out", and over the plan the run before saved, "out-again", which
// cairn reads first to check it is a plan), printed as JSON (`--json`) and
// printed as text (no flag), with the wall time and the peak RSS of each
// command.
//
// The stack: one network and N - 1 instances, each referring to the network
// (`network: ${network.n0.id}`), in files of 1,000 documents; the server is
// empty, so every resource is a create. One `cairn serve` (of the first
// binary) answers every run; each binary plans its own copy of the stack
// (a plan opens the stack's state, whose format differs between versions).
//
// Several binaries can be given (`--cairn OLD --cairn NEW`): each run runs
// every command with each binary in turn, so that old and new are measured
// alternately on one machine, under the same load. Peak RSS is the maximum
// resident set of the command, and CPU its user + system time, as GNU
// time(1) reports them (`%M`, `%U`, `%S`): on a loaded machine CPU time
// varies less than wall time.
//
// Usage: plan_creates [--cairn PATH]... [--creates 10000,100000] [--runs 3]
//                     [--modes out,out-again,json,text] [--work DIR (kept; default: a temporary
//                     one)]
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
using cairn::testing::CommandResult;
using cairn::testing::ReadFile;
using cairn::testing::RunCommand;
using cairn::testing::TempDir;
using cairn::testing::WriteFile;

constexpr const char* kCommandTimeout = "900";  // seconds, per command
constexpr const char* kGnuTime = "/usr/bin/time";

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Runs(const std::vector<double>& v, int precision) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(precision);
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str();
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// One network and `total - 1` instances on it, 1,000 documents per file.
void WriteCreatesStack(const std::string& dir, int total) {
  std::string text =
      "---\nkind: network\nname: n0\nspec:\n  name: bench-n0\n  region: eu-central\n"
      "  cidr: 10.0.0.0/16\n";
  for (int i = 0; i + 1 < total; ++i) {
    text += "---\nkind: instance\nname: i" + std::to_string(i) + "\nspec:\n  name: bench-i" +
            std::to_string(i) +
            "\n  region: eu-central\n  plan: s-1vcpu-1gb\n  image: debian-12\n"
            "  network: ${network.n0.id}\n";
    if ((i + 1) % 1000 == 0 || i + 2 == total) {
      WriteFile(dir + "/main_" + std::to_string(i / 1000) + ".yaml", text);
      text.clear();
    }
  }
}

struct Measured {
  double seconds = 0;
  double cpu_seconds = 0;
  double rss_mb = 0;
  size_t output_bytes = 0;
};

// Runs `cairn plan DIR <mode flags>` under GNU time; exit 2 expected
// (--detailed-exitcode: changes present).
Measured RunPlan(const std::string& cairn, const LocalServer& server, const std::string& dir,
                 const std::string& mode, const std::string& scratch) {
  const std::string time_file = scratch + "/time.txt", plan_file = scratch + "/plan.json";
  std::vector<std::string> argv = {kGnuTime,
                                   "-f",
                                   "%U %S %M",
                                   "-o",
                                   time_file,
                                   "/usr/bin/timeout",
                                   "--signal=KILL",
                                   kCommandTimeout,
                                   cairn,
                                   "plan",
                                   dir,
                                   "--detailed-exitcode"};
  if (mode == "out" || mode == "out-again") {
    if (mode == "out") std::filesystem::remove(plan_file);
    argv.insert(argv.end(), {"--out", plan_file});
  } else if (mode == "json") {
    argv.push_back("--json");
  } else if (mode != "text") {
    Die("unknown mode " + mode + " (out, out-again, json or text)");
  }
  auto start = Clock::now();
  CommandResult r = RunCommand(
      argv, {{"CAIRN_ENDPOINT", server.endpoint()}, {"CAIRN_TOKEN", kToken}, {"NO_COLOR", "1"}});
  Measured m;
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (r.exit_code != 2) {
    Die(cairn + " plan (" + mode + "): exit " + std::to_string(r.exit_code) +
        " (expected 2)\n--- stderr\n" + r.err.substr(0, 4000));
  }
  // GNU time writes "Command exited with non-zero status 2" before the figures.
  std::string figures = ReadFile(time_file);
  std::istringstream lines(figures);
  std::string last;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last = line;
  }
  std::istringstream fields(last);
  double user = 0, system = 0, rss_kib = 0;
  fields >> user >> system >> rss_kib;
  m.cpu_seconds = user + system;
  m.rss_mb = rss_kib / 1024.0;
  m.output_bytes = mode == "out" || mode == "out-again" ? std::filesystem::file_size(plan_file)
                                                        : static_cast<size_t>(r.out.size());
  return m;
}

int Run(int argc, char** argv) {
  std::vector<std::string> binaries;
  std::vector<std::string> sizes = {"10000", "100000"},
                           modes = {"out", "out-again", "json", "text"};
  int runs = 3;
  std::string kept_work;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cairn")
      binaries.push_back(value());
    else if (a == "--creates")
      sizes = Split(value());
    else if (a == "--runs")
      runs = std::stoi(value());
    else if (a == "--modes")
      modes = Split(value());
    else if (a == "--work")
      kept_work = value();
    else
      Die("unknown argument " + a + " (see the comment at the top of plan_creates.cc)");
  }
  if (binaries.empty()) {
    binaries.push_back(
        (std::filesystem::absolute(argv[0]).parent_path() / ".." / "cli" / "cairn").string());
  }
  for (auto& b : binaries) {
    b = std::filesystem::weakly_canonical(b).string();
    if (access(b.c_str(), X_OK) != 0) Die("no cairn binary at " + b + " (pass --cairn PATH)");
  }
  if (access(kGnuTime, X_OK) != 0) Die("GNU time is needed at /usr/bin/time (Debian: time)");
  if (runs < 1) Die("bad --runs");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  TempDir temp;
  const std::string work = kept_work.empty() ? temp.path() : kept_work;
  LocalServer server(binaries.front(), work + "/data");
  for (size_t b = 0; b < binaries.size(); ++b) {
    std::printf("binary %zu: %s\n", b + 1, binaries[b].c_str());
  }
  std::printf("%d run(s) per figure, alternating the binaries; median [runs]\n\n", runs);
  for (const std::string& size : sizes) {
    const int n = std::stoi(size);
    if (n < 2) Die("--creates: at least 2");
    std::vector<std::string> dirs;
    for (size_t b = 0; b < binaries.size(); ++b) {
      dirs.push_back(work + "/stack-" + size + "-" + std::to_string(b + 1));
      WriteCreatesStack(dirs.back(), n);
    }
    for (const std::string& mode : modes) {
      // [binary] -> runs
      std::vector<std::vector<Measured>> results(binaries.size());
      for (int run = 0; run < runs; ++run) {
        for (size_t b = 0; b < binaries.size(); ++b) {
          std::string scratch = work + "/scratch-" + std::to_string(b + 1);
          std::filesystem::create_directories(scratch);
          if (mode == "out-again" && run == 0) {  // the plan it replaces
            RunPlan(binaries[b], server, dirs[b], "out", scratch);
          }
          results[b].push_back(RunPlan(binaries[b], server, dirs[b], mode, scratch));
        }
      }
      for (size_t b = 0; b < binaries.size(); ++b) {
        std::vector<double> secs, cpu, rss;
        for (const auto& m : results[b]) {
          secs.push_back(m.seconds);
          cpu.push_back(m.cpu_seconds);
          rss.push_back(m.rss_mb);
        }
        std::string what = mode == "text" ? "plan" : mode == "json" ? "plan --json" : "plan --out";
        if (mode == "out-again") what += " (again)";
        std::printf(
            "%d creates, %-20s binary %zu: %.2f s [%s], CPU %.2f s [%s], peak RSS %.0f MB [%s], "
            "%zu bytes\n",
            n, what.c_str(), b + 1, Median(secs), Runs(secs, 2).c_str(), Median(cpu),
            Runs(cpu, 2).c_str(), Median(rss), Runs(rss, 0).c_str(),
            results[b].back().output_bytes);
      }
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "plan_creates: " << e.what() << "\n";
    return 1;
  }
}
