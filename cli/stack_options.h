// The flags every command that reads a stack shares (validate, graph, plan,
// apply, destroy...): DIR... (default "."), -r/--recursive, --var NAME=VALUE
// (repeatable), --var-file FILE (repeatable), --max-instances N (else
// $CAIRN_MAX_INSTANCES, else kDefaultMaxInstances), --workspace NAME (else
// $CAIRN_WORKSPACE, else the stack's selected one: engine/state/workspaces.h).
// Add them with
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
  std::string workspace;     // --workspace; empty: not given
};

// The workspace a command works on, and what named it.
struct ChosenWorkspace {
  std::string name = "default";
  // "--workspace", "CAIRN_WORKSPACE", the selection file's path, or "" for
  // the default when nothing named one.
  std::string source;
};

// --workspace `flag`, else $CAIRN_WORKSPACE, else the `.cairn/workspace` of
// the stack that `paths` name (the first: a directory, or a file's), else
// "default". False (with `error` set) for a name that is not a valid one.
bool ChooseWorkspace(const std::string& flag, const std::vector<std::string>& paths,
                     ChosenWorkspace& chosen, std::string& error);

// `multiple_paths`: whether DIR takes several directories or files;
// `positional_dir`: false for a command that reads DIR among its own
// positional arguments (it fills flags.paths itself).
void AddStackFlags(CLI::App& app, StackFlags& flags, bool multiple_paths = true,
                   bool positional_dir = true);

// --workspace alone, for a command that adds the other flags itself.
void AddWorkspaceFlag(CLI::App& app, StackFlags& flags);

// False (with `error` set) when a --var is not NAME=VALUE,
// CAIRN_MAX_INSTANCES is not a whole number of at least 1, or the workspace
// (ChooseWorkspace) has an invalid name.
bool ToLoadOptions(const StackFlags& flags, LoadOptions& options, std::string& error);

}  // namespace cairn::cli
