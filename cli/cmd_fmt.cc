// cairn fmt: rewrites manifest files in the canonical layout
// (engine/manifest/format.h), comments kept; --check only reports.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "base/diagnostic.h"
#include "base/env.h"
#include "base/private_key.h"
#include "cli/command.h"
#include "engine/manifest/format.h"
#include "engine/manifest/loader.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;

bool IsManifest(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

// Where and how `file` is rewritten so that it stays the file it was: a
// symbolic link's target (the link stays a link), with its mode, and its
// owner and group (fchown, which only root can do for another user's file).
// Refused, with the reason, rather than changed into another file:
//  - a read-only file (no write permission for this user, or, for root, for
//    anyone): its owner asked for it not to change;
//  - a file with other hard links: the atomic rename gives the path a new
//    file, and the other names would keep the old text. Writing in place
//    instead would keep the links but not the atomicity (a crash would
//    leave half a manifest under every name), so such files are left to be
//    formatted by hand (or after `cp` breaks the link);
//  - another user's file, for a user who cannot give it back: the rename
//    would make it theirs.
struct RewriteTarget {
  std::string path;
  FileAttributes attributes;
};
Result<RewriteTarget> ResolveRewriteTarget(const fs::path& file) {
  std::error_code ec;
  const fs::path target = fs::canonical(file, ec);
  if (ec) return Status::IOError("cannot resolve " + file.string() + ": " + ec.message());
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0)
    return Status::IOError("cannot stat " + target.string() + ": " + std::strerror(errno));
  // The file named, and the link's target when they differ.
  const std::string named = target == fs::absolute(file).lexically_normal()
                                ? file.string()
                                : file.string() + " (" + target.string() + ")";
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(named + " is not a regular file");
  const uid_t me = ::geteuid();
  const bool read_only = (st.st_mode & 0222) == 0 ||
                         (me != 0 && ::faccessat(AT_FDCWD, target.c_str(), W_OK, AT_EACCESS) != 0);
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (read_only)
    return Status::FailedPrecondition(named + " is read-only (mode " + mode +
                                      "): not rewritten; make it writable to format it");
  if (st.st_nlink > 1)
    return Status::FailedPrecondition(
        named + " has " + std::to_string(st.st_nlink) +
        " hard links: not rewritten, as replacing it would leave the other names with the old "
        "text; format a copy and move it into place");
  if (st.st_uid != me && me != 0)
    return Status::FailedPrecondition(named + " belongs to another user (uid " +
                                      std::to_string(st.st_uid) +
                                      "): not rewritten, as the new file would be yours");
  RewriteTarget out{target.string(), {.mode = static_cast<mode_t>(st.st_mode & 07777)}};
  // The group always (a user may own a file of a group they are in, which
  // the new file would not otherwise get); the owner when it is not us.
  if (st.st_uid != me) out.attributes.owner = st.st_uid;
  if (st.st_gid != ::getegid()) out.attributes.group = st.st_gid;
  return out;
}

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
      std::cerr << "error: " << p << ": no such file or directory\n";
      failed = true;
    }
  }
  int changed = 0;
  for (const fs::path& file : files) {
    // Read as the loader reads a manifest: only a regular file, bounded.
    auto read = PosixEnv().ReadFile(file.string(), kMaxManifestFileBytes);
    if (!read.ok()) {
      std::cerr << "error: cannot read " << file.string() << ": " << read.status().message()
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
        std::cerr << "error: " << file.string() << ": " << formatted.status().message() << "\n";
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
    auto target = ResolveRewriteTarget(file);
    if (!target.ok()) {
      std::cerr << "error: " << target.status().message() << "\n";
      failed = true;
      continue;
    }
    if (Status st = PosixEnv().WriteFileAtomically(target->path, *formatted, target->attributes);
        !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
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
      "means (re-read) is unchanged, and atomically. A symbolic link's target is rewritten\n"
      "(the link stays), keeping its mode, owner and group; a read-only file, one with\n"
      "other hard links, or another user's file (unless run as root) is refused. What\n"
      "validate refuses before reading any value (NUL bytes, bytes that are not UTF-8,\n"
      "syntax errors, alias bombs) is reported as it reports it, and the file left alone.\n\n"
      "Examples:\n"
      "  cairn fmt examples/web\n"
      "  cairn fmt --check -r .     # in CI: exit 1 lists the files to format");
  return [f, &global] { return Fmt(*f, UseColor(global, STDERR_FILENO)); };
}

}  // namespace

CAIRN_COMMAND("fmt", "Rewrite manifests in the canonical layout", 15, SetupFmt);

}  // namespace cairn::cli
