// The flags every command that reads a stack shares (validate, graph, plan,
// apply, destroy...): DIR... (default "."), -r/--recursive, --var NAME=VALUE
// (repeatable), --var-file FILE (repeatable), --max-instances N (else
// $CAIRN_MAX_INSTANCES, else kDefaultMaxInstances). Add them with
// AddStackFlags and turn them into LoadOptions with ToLoadOptions.
#pragma once

#include <string>
#include <vector>

#include "engine/manifest/loader.h"

namespace CLI {
class App;
}

namespace cairn::cli {

struct StackFlags {
  std::vector<std::string> paths;
  bool recursive = false;
  std::vector<std::string> vars;  // NAME=VALUE
  std::vector<std::string> var_files;
  size_t max_instances = 0;  // 0: not given
};

// `multiple_paths`: whether DIR takes several directories or files;
// `positional_dir`: false for a command that reads DIR among its own
// positional arguments (it fills flags.paths itself).
void AddStackFlags(CLI::App& app, StackFlags& flags, bool multiple_paths = true,
                   bool positional_dir = true);

// False (with `error` set) when a --var is not NAME=VALUE or
// CAIRN_MAX_INSTANCES is not a whole number of at least 1.
bool ToLoadOptions(const StackFlags& flags, LoadOptions& options, std::string& error);

}  // namespace cairn::cli
