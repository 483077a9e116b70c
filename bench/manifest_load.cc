// Benchmark: load + validate + graph a generated 10,000-resource stack.
// Generates, into a temporary directory, 1,000 networks, 500 SSH keys, 500
// firewalls and 8,000 instances (every instance refers to a network, a key
// and depends on a firewall), spread over 100 files; then times LoadStack
// (YAML parsing, schema validation of every spec, references, graph and
// topological order) and prints the time and the peak RSS.
//
//   build/bench/manifest_load [RESOURCES] [RUNS] [--expressions]
//
// With --expressions, every resource is a single instance whose fields use a
// conditional and five function calls (the expression language at load):
// the instances take their plan, image, name and region through lower,
// upper, format, join and tostring, the networks their CIDR through
// cidrsubnet.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/manifest/loader.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const int total = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const bool expressions = argc > 3 && std::string(argv[3]) == "--expressions";
  const int networks = total / 10, keys = total / 20, firewalls = total / 20;
  const int instances = total - networks - keys - firewalls;
  const int files = 100;
  std::string tmpl = (fs::temp_directory_path() / "cairn-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  fs::path dir = tmpl;
  const char* pub =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnTeJ4cv3DIaWIqPkOPGOGfkr1jBWHybmrVyQxFyV4V "
      "bench@example";
  std::vector<std::string> text(files);
  int n = 0;
  auto doc = [&](const std::string& s) { text[n++ % files] += s + "---\n"; };
  doc("kind: variable\nname: region\ndefault: eu-central\n");
  doc("kind: variable\nname: prod\ntype: bool\ndefault: true\n");
  for (int i = 0; i < networks; ++i) {
    if (expressions) {
      doc("kind: network\nname: net" + std::to_string(i) +
          "\nspec:\n  region: '${var.prod ? var.region : \"us-east\"}'\n"
          "  cidr: ${cidrsubnet(\"10.0.0.0/8\", 8, " +
          std::to_string(i % 256) + ")}\n");
      continue;
    }
    doc("kind: network\nname: net" + std::to_string(i) +
        "\nspec:\n  region: ${var.region}\n  cidr: 10." + std::to_string(i % 256) + ".0.0/16\n");
  }
  for (int i = 0; i < keys; ++i) {
    doc("kind: ssh_key\nname: key" + std::to_string(i) + "\nspec:\n  public_key: " + pub + "\n");
  }
  for (int i = 0; i < firewalls; ++i) {
    doc("kind: firewall\nname: fw" + std::to_string(i) +
        "\nspec:\n  rules:\n    - {direction: inbound, protocol: tcp, port: \"22\", source: "
        "0.0.0.0/0, action: "
        "allow}\n    - {direction: inbound, protocol: tcp, port: \"443\", source: 0.0.0.0/0, "
        "action: allow}\n");
  }
  for (int i = 0; expressions && i < instances; ++i) {
    const std::string id = std::to_string(i);
    doc("kind: instance\nname: web" + id + "\nspec:\n  name: ${join(\"-\", [\"web\", tostring(" +
        id +
        ")])}\n"
        "  region: '${var.prod ? var.region : \"us-east\"}'\n"
        "  plan: ${lower(\"S-1VCPU-1GB\")}\n"
        "  image: '${format(\"%s-%d\", upper(\"debian\") == \"DEBIAN\" ? \"debian\" : \"x\", "
        "12)}'\n"
        "  network: ${network.net" +
        std::to_string(i % networks) + ".id}\n  ssh_keys: [\"${ssh_key.key" +
        std::to_string(i % keys) + ".id}\"]\ndepends_on: [firewall.fw" +
        std::to_string(i % firewalls) + "]\n");
  }
  for (int i = 0; !expressions && i < instances; ++i) {
    doc("kind: instance\nname: web" + std::to_string(i) +
        "\nspec:\n  region: ${var.region}\n  plan: s-1vcpu-1gb\n  image: debian-12\n  network: "
        "${network.net" +
        std::to_string(i % networks) + ".id}\n  ssh_keys: [\"${ssh_key.key" +
        std::to_string(i % keys) + ".id}\"]\ndepends_on: [firewall.fw" +
        std::to_string(i % firewalls) + "]\n");
  }
  size_t bytes = 0;
  for (int f = 0; f < files; ++f) {
    std::ofstream(dir / ("stack" + std::to_string(f) + ".yaml")) << text[f];
    bytes += text[f].size();
  }
  text.clear();
  text.shrink_to_fit();

  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  double best = 1e9;
  size_t loaded = 0;
  for (int run = 0; run < runs; ++run) {
    cairn::LoadOptions options;
    options.paths = {dir.string()};
    auto start = std::chrono::steady_clock::now();
    cairn::LoadResult result = cairn::LoadStack(options);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) {
      std::fprintf(stderr, "unexpected diagnostics: %zu, first: %s\n", result.diagnostics.size(),
                   result.diagnostics[0].summary.c_str());
      return 1;
    }
    loaded = result.config.resources.size();
    best = std::min(best, secs);
    std::printf("run %d: %.3f s\n", run + 1, secs);
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  double cpu = (seconds(usage.ru_utime) - seconds(before.ru_utime) + seconds(usage.ru_stime) -
                seconds(before.ru_stime)) /
               runs;
  std::printf(
      "manifest_load: %zu resources%s, %d files, %.1f MB of YAML: best %.3f s wall, %.3f s CPU "
      "per run, peak RSS %.1f MB\n",
      loaded, expressions ? " (expressions)" : "", files, bytes / 1e6, best, cpu,
      usage.ru_maxrss / 1024.0);
  fs::remove_all(dir);
  return 0;
}
