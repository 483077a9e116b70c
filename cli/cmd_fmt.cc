// cairn fmt: rewrites manifest files in the canonical layout
// (engine/manifest/format.h), comments kept; --check only reports.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "cli/command.h"
#include "cli/engine_session.h"
#include "engine/manifest/format.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;

bool IsManifest(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

struct FmtFlags {
  std::vector<std::string> paths;
  bool recursive = false;
  bool check = false;
};

int Fmt(const FmtFlags& f) {
  std::vector<fs::path> files;
  bool failed = false;
  for (const std::string& p : f.paths.empty() ? std::vector<std::string>{"."} : f.paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      auto add = [&](const fs::directory_entry& e) {
        if (e.is_regular_file() && IsManifest(e.path())) found.push_back(e.path());
      };
      if (f.recursive) {
        for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
          // The state directory holds no manifests.
          if (e.path().filename() != ".cairn") add(e);
        }
      } else {
        for (const auto& e : fs::directory_iterator(p, ec)) add(e);
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      std::cerr << "cairn: error: " << p << ": no such file or directory\n";
      failed = true;
    }
  }
  int changed = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::cerr << "cairn: error: cannot read " << file.string() << "\n";
      failed = true;
      continue;
    }
    auto formatted = FormatManifest(text);
    if (!formatted.ok()) {
      std::cerr << "cairn: error: " << file.string() << ": " << formatted.status().message()
                << "\n";
      failed = true;
      continue;
    }
    if (*formatted == text) continue;
    ++changed;
    if (f.check) {
      std::cout << file.string() << "\n";  // would change
      continue;
    }
    std::error_code ec;
    auto perms = fs::status(file, ec).permissions();
    std::string error;
    if (!WriteFileAtomically(
            file.string(), *formatted, error,
            {.mode = ec ? mode_t{0644} : static_cast<mode_t>(perms & fs::perms::mask)})) {
      std::cerr << "cairn: error: " << error << "\n";
      failed = true;
      continue;
    }
    std::cout << "formatted " << file.string() << "\n";
  }
  if (failed) return 1;
  return f.check && changed > 0 ? 1 : 0;
}

std::function<int()> SetupFmt(CLI::App& sub, const GlobalOptions&) {
  auto f = std::make_shared<FmtFlags>();
  sub.add_option("PATH", f->paths, "Manifest files or stack directories (default: .)");
  sub.add_flag("-r,--recursive", f->recursive, "Also format manifests in subdirectories");
  sub.add_flag("--check", f->check,
               "Change nothing: list the files that would change, and exit 1 if any would");
  sub.footer(
      "Rewrites *.yaml and *.yml files in the canonical layout: two spaces per level, one\n"
      "space after a key's colon, no trailing whitespace, no runs of blank lines, a final\n"
      "newline. Comments and block scalars are kept; a file is rewritten only when what it\n"
      "means (re-read) is unchanged, and atomically.\n\n"
      "Examples:\n"
      "  cairn fmt examples/web\n"
      "  cairn fmt --check -r .     # in CI: exit 1 lists the files to format");
  return [f] { return Fmt(*f); };
}

}  // namespace

CAIRN_COMMAND("fmt", "Rewrite manifests in the canonical layout", 15, SetupFmt);

}  // namespace cairn::cli
