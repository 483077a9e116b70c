#include "engine/manifest/read_files.h"

#include <filesystem>
#include <set>

#include "base/env.h"
#include "engine/manifest/loader.h"

namespace cairn {

namespace fs = std::filesystem;

ReadFilesResult ReadManifestFiles(const std::vector<std::string>& given, bool recursive,
                                  const Env& env) {
  ReadFilesResult out;
  std::vector<std::string> paths = given;
  if (paths.empty()) paths.push_back(".");
  std::set<std::string> seen;
  for (const auto& p : paths) {
    if (env.IsDirectory(p)) {
      if (out.root.empty()) out.root = p;
      for (const auto& display : ManifestFilesIn(env, p, recursive)) {
        if (seen.insert(display).second) out.files.emplace_back(display, "");
      }
    } else if (env.Exists(p)) {
      if (out.root.empty()) {
        std::string parent = fs::path(p).parent_path().string();
        out.root = parent.empty() ? "." : parent;
      }
      std::string display = fs::path(p).lexically_normal().string();
      if (seen.insert(display).second) out.files.emplace_back(display, "");
    } else {
      AddError(out.diagnostics, "path_not_found", "no such file or directory: " + p, {});
    }
  }
  ReadContents(env, out.files, out.diagnostics);
  if (out.root.empty()) out.root = ".";
  return out;
}

bool IsTestFileName(std::string_view name) {
  return name.ends_with(".test.yaml") || name.ends_with(".test.yml");
}

std::vector<std::string> ManifestFilesIn(const Env& env, const std::string& dir, bool recursive) {
  std::vector<std::string> files = env.ListFiles(dir, recursive, {".yaml", ".yml"});
  std::erase_if(files, [](const std::string& f) { return IsTestFileName(f); });
  return files;
}

std::vector<std::string> TestFilesIn(const Env& env, const std::string& dir) {
  std::vector<std::string> files = env.ListFiles(dir, false, {".yaml", ".yml"});
  std::erase_if(files, [](const std::string& f) { return !IsTestFileName(f); });
  return files;
}

ManifestFiles ReadAll(const Env& env, const std::vector<std::string>& names,
                      std::vector<Diagnostic>& diags) {
  ManifestFiles files;
  files.reserve(names.size());
  for (const std::string& n : names) files.emplace_back(n, "");
  ReadContents(env, files, diags);
  return files;
}

void ReadContents(const Env& env, ManifestFiles& files, std::vector<Diagnostic>& diags) {
  for (auto& [display, content] : files) {
    auto text = env.ReadFile(display, kMaxManifestFileBytes);
    if (text.ok()) {
      content = std::move(*text);
    } else {
      AddUnreadable(diags, "cannot read " + display, text.status(), {}, "");
    }
  }
}

void AddUnreadable(std::vector<Diagnostic>& diags, const std::string& summary, const Status& why,
                   SourceLocation at, std::string detail) {
  std::string code = "file_not_found";
  if (why.code() == StatusCode::kInvalidArgument) code = "file_not_regular";
  if (why.code() == StatusCode::kFailedPrecondition) code = "file_too_large";
  if (code == "file_not_regular")
    detail = "only regular files are read" + (detail.empty() ? "" : "; " + detail);
  AddError(diags, code, summary + ": " + why.message(), std::move(at), std::move(detail));
}

}  // namespace cairn
