// The catalog of invalid stacks: every folder under invalid/ is a stack that
// must fail to load with exactly the diagnostics listed in its expected.txt,
// one per line, sorted as reported:
//   FILE:LINE:COLUMN: CODE: SUMMARY      (FILE relative to the case folder)
//   -: CODE: SUMMARY                     (a diagnostic without a position)
// Optional files: vars.txt (NAME=VALUE lines, as --var), varfiles.txt (paths
// relative to the case, as --var-file), env.txt (NAME=VALUE lines, the whole
// environment the loader sees).
// Set CAIRN_UPDATE_EXPECTED=1 to rewrite expected.txt from the actual output
// (then review the diff).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/manifest/loader.h"

namespace invalid_catalog_test {  // one namespace per test file: see tests/CMakeLists.txt

namespace fs = std::filesystem;
using namespace cairn;

namespace {

std::vector<std::string> ReadLines(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("every invalid stack in the catalog fails with exactly its expected diagnostics") {
  fs::path root = fs::path(CAIRN_TEST_DATA_DIR) / "engine" / "manifest" / "invalid";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory()) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 30);
  bool update = std::getenv("CAIRN_UPDATE_EXPECTED") != nullptr;
  for (const auto& dir : cases) {
    DYNAMIC_SECTION(dir.filename().string()) {
      LoadOptions options;
      options.paths = {dir.string()};
      options.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
      for (const auto& line : ReadLines(dir / "vars.txt")) {
        options.vars[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
      }
      for (const auto& line : ReadLines(dir / "varfiles.txt"))
        options.var_files.push_back((dir / line).string());
      auto env = std::make_shared<std::map<std::string, std::string>>();
      for (const auto& line : ReadLines(dir / "env.txt")) {
        (*env)[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
      }
      options.getenv = [env](const char* name) -> const char* {
        auto it = env->find(name);
        return it == env->end() ? nullptr : it->second.c_str();
      };
      LoadResult result = LoadStack(options);
      std::vector<std::string> actual;
      std::string prefix = dir.string() + "/";
      for (const auto& d : result.diagnostics) {
        std::string where = "-";
        if (!d.location.file.empty()) {
          where = d.location.file.rfind(prefix, 0) == 0 ? d.location.file.substr(prefix.size())
                                                        : d.location.file;
          if (d.location.has_position()) {
            where +=
                ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
          }
        }
        actual.push_back(where + ": " + d.code + ": " + d.summary);
      }
      if (update) {
        std::ofstream(dir / "expected.txt") << Join(actual);
      }
      CHECK_FALSE(result.ok());
      CHECK(Join(actual) == Join(ReadLines(dir / "expected.txt")));
      // Key material is never shown, whatever the diagnostic.
      SourceFiles& sources = result.sources;
      std::string rendered = RenderDiagnostics(result.diagnostics, sources);
      CHECK(rendered.find("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ") == std::string::npos);
    }
  }
}

}  // namespace invalid_catalog_test
