#include "cli/target_flags.h"

#include <iostream>
#include <sstream>

#include "base/env.h"

namespace cairn::cli {
namespace {

// Files of addresses are small; one larger than this is not one.
constexpr size_t kMaxTargetFileBytes = 4 << 20;

bool ReadPatterns(const std::string& flag, const std::string& path,
                  std::vector<std::string>& into) {
  auto text = PosixEnv().ReadFile(path, kMaxTargetFileBytes);
  if (!text.ok()) {
    std::cerr << "error: " << flag << " " << path << ": " << text.status().message() << "\n";
    return false;
  }
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const size_t end = line.find_last_not_of(" \t\r");
    into.push_back(line.substr(begin, end - begin + 1));
  }
  return true;
}

}  // namespace

void AddTargetFlags(CLI::App& sub, TargetFlags& flags, const std::string& target_help) {
  sub.add_option("--target", flags.targets,
                 target_help +
                     " ADDRESS may be a pattern: [*] for any index (instance.web[*], "
                     "module.app[*].network.main); one that names nothing is an error "
                     "(repeatable)")
      ->type_name("ADDRESS")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--exclude", flags.excludes,
                 "Everything but ADDRESS (an address or pattern, as --target takes) and what "
                 "cannot be done without it: what depends on it when created or updated, what "
                 "it depends on when deleted (repeatable; not with --target)")
      ->type_name("ADDRESS")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--target-file", flags.target_files,
                 "--target for each line of FILE (an address or pattern a line; blank lines and "
                 "# comments skipped)")
      ->type_name("FILE")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--exclude-file", flags.exclude_files,
                 "--exclude for each line of FILE (as --target-file)")
      ->type_name("FILE")
      ->expected(1)
      ->allow_extra_args(false);
}

bool ReadTargetFiles(TargetFlags& flags) {
  for (const std::string& f : flags.target_files) {
    if (!ReadPatterns("--target-file", f, flags.targets)) return false;
  }
  for (const std::string& f : flags.exclude_files) {
    if (!ReadPatterns("--exclude-file", f, flags.excludes)) return false;
  }
  flags.target_files.clear();
  flags.exclude_files.clear();
  if (!flags.targets.empty() && !flags.excludes.empty()) {
    std::cerr << "error: --target and --exclude cannot be used together: give what to act on, "
                 "or what to leave alone\n";
    return false;
  }
  return true;
}

}  // namespace cairn::cli
