// Reading files, the first stage of loading a stack: the manifest files the
// paths name (every *.yaml / *.yml of a directory, in name order; a file as
// given), each read once, and the stack's root directory. Paths and an Env
// in, the files' names and contents and diagnostics out; nothing here
// parses a file.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "base/status.h"

namespace cairn {

class Env;

// Display name (lexically normal) and content, in the order read.
using ManifestFiles = std::vector<std::pair<std::string, std::string>>;

struct ReadFilesResult {
  ManifestFiles files;
  // The first directory path, else the first file path's directory, else
  // "." (also when `paths` is empty).
  std::string root;
  // path_not_found for a path that is neither; file_not_found,
  // file_not_regular or file_too_large for a file that cannot be read (it is
  // kept, empty).
  std::vector<Diagnostic> diagnostics;
};

// The manifest files of `paths` (empty means "."), a file named twice read
// once; with `recursive`, a directory's subdirectories too.
ReadFilesResult ReadManifestFiles(const std::vector<std::string>& paths, bool recursive,
                                  const Env& env);

// Whether `name` is a test file: *.test.yaml or *.test.yml, which hold the
// runs of `cairn test` (or, in a policy directory, `cairn policy test`'s
// cases) and are never manifests or policies.
bool IsTestFileName(std::string_view name);

// The *.yaml and *.yml files in `dir` (display names), in name order; not
// the test files.
std::vector<std::string> ManifestFilesIn(const Env& env, const std::string& dir, bool recursive);

// The test files directly in `dir`, in name order.
std::vector<std::string> TestFilesIn(const Env& env, const std::string& dir);

// `names` with their contents, read by ReadContents.
ManifestFiles ReadAll(const Env& env, const std::vector<std::string>& names,
                      std::vector<Diagnostic>& diags);

// Fills in each file's content (at most kMaxManifestFileBytes); a file that
// cannot be read is reported and left empty.
void ReadContents(const Env& env, ManifestFiles& files, std::vector<Diagnostic>& diags);

// A file Env::ReadFile refused, as file_not_found, file_not_regular or
// file_too_large: "SUMMARY: WHY".
void AddUnreadable(std::vector<Diagnostic>& diags, const std::string& summary, const Status& why,
                   SourceLocation at, std::string detail);

}  // namespace cairn
