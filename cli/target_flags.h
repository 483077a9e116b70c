// --target, --exclude, --target-file and --exclude-file, shared by plan,
// apply and destroy: addresses or patterns (engine/address_pattern.h) of
// what to act on, or what to leave alone.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace cairn::cli {

struct TargetFlags {
  std::vector<std::string> targets;        // --target, then --target-file's lines
  std::vector<std::string> excludes;       // --exclude, then --exclude-file's lines
  std::vector<std::string> target_files;   // --target-file
  std::vector<std::string> exclude_files;  // --exclude-file

  bool any() const {
    return !targets.empty() || !excludes.empty() || !target_files.empty() || !exclude_files.empty();
  }
};

// `target_help` says what --target does for this command.
void AddTargetFlags(CLI::App& sub, TargetFlags& flags, const std::string& target_help);

// Reads the files' patterns into `targets` and `excludes` (one a line;
// blank lines and lines starting with # skipped), and refuses targets with
// exclusions. False after printing why.
bool ReadTargetFiles(TargetFlags& flags);

}  // namespace cairn::cli
