// cairn fmt: rewrites manifest files in the canonical layout
// (engine/manifest/format.h), comments kept; --check only reports.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "base/diagnostic.h"
#include "base/env.h"
#include "base/private_key.h"
#include "cli/command.h"
#include "cli/engine_session.h"
#include "engine/manifest/format.h"
#include "engine/manifest/loader.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;

bool IsManifest(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

struct FmtFlags {
  std::vector<std::string> paths;
  bool recursive = false;
  bool check = false;
};

int Fmt(const FmtFlags& f, bool color) {
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
    // Read as the loader reads a manifest: only a regular file, bounded.
    auto read = PosixEnv().ReadFile(file.string(), kMaxManifestFileBytes);
    if (!read.ok()) {
      std::cerr << "cairn: error: cannot read " << file.string() << ": " << read.status().message()
                << "\n";
      failed = true;
      continue;
    }
    const std::string& text = *read;
    std::vector<Diagnostic> refused;  // as validate reports them: file:line:col
    auto formatted = FormatManifest(text, file.string(), refused);
    if (!formatted.ok()) {
      if (!refused.empty()) {
        SourceFiles sources;
        sources.Add(file.string(), RedactPrivateKeys(text));
        std::cerr << RenderDiagnostics(refused, sources, {color});
      } else {
        std::cerr << "cairn: error: " << file.string() << ": " << formatted.status().message()
                  << "\n";
      }
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
    if (!WriteFileAtomically(file.string(), *formatted, error,
                             ec ? 0644 : static_cast<mode_t>(perms & fs::perms::mask))) {
      std::cerr << "cairn: error: " << error << "\n";
      failed = true;
      continue;
    }
    std::cout << "formatted " << file.string() << "\n";
  }
  if (failed) return 1;
  return f.check && changed > 0 ? 1 : 0;
}

std::function<int()> SetupFmt(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<FmtFlags>();
  sub.add_option("PATH", f->paths, "Manifest files or stack directories (default: .)");
  sub.add_flag("-r,--recursive", f->recursive, "Also format manifests in subdirectories");
  sub.add_flag("--check", f->check,
               "Change nothing: list the files that would change, and exit 1 if any would");
  sub.footer(
      "Rewrites *.yaml and *.yml files in the canonical layout: two spaces per level, one\n"
      "space after a key's colon, no trailing whitespace, no runs of blank lines, a final\n"
      "newline. Comments and block scalars are kept; a file is rewritten only when what it\n"
      "means (re-read) is unchanged, and atomically. What validate refuses before reading any\n"
      "value (NUL bytes, bytes that are not UTF-8, syntax errors, alias bombs) is reported as\n"
      "it reports it, and the file left alone.\n\n"
      "Examples:\n"
      "  cairn fmt examples/web\n"
      "  cairn fmt --check -r .     # in CI: exit 1 lists the files to format");
  return [f, &global] { return Fmt(*f, UseColor(global, STDERR_FILENO)); };
}

}  // namespace

CAIRN_COMMAND("fmt", "Rewrite manifests in the canonical layout", 15, SetupFmt);

}  // namespace cairn::cli
