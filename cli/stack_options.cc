#include "cli/stack_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "base/env.h"
#include "cli/flag_checks.h"
#include "engine/state/workspaces.h"

namespace cairn::cli {

void AddStackFlags(CLI::App& app, StackFlags& flags, bool multiple_paths, bool positional_dir) {
  if (!positional_dir) {
    // DIR is the caller's.
  } else if (multiple_paths) {
    app.add_option("DIR", flags.paths, "Stack directories or manifest files (default: .)");
  } else {
    app.add_option("DIR", flags.paths, "Stack directory or manifest file (default: .)")
        ->expected(0, 1);
  }
  app.add_flag("-r,--recursive", flags.recursive, "Also read manifests in subdirectories");
  app.add_option("--var", flags.vars,
                 "Set a variable: NAME=VALUE (repeatable; overrides everything)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);  // one value per --var, so `--var a=1 DIR` works
  app.add_option("--var-file", flags.var_files,
                 "Read variable values from a YAML file (repeatable)")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--max-instances", flags.max_instances,
                 "Refuse a stack with more resource instances than N (default: "
                 "$CAIRN_MAX_INSTANCES, else " +
                     std::to_string(kDefaultMaxInstances) + ")")
      ->type_name("N")
      ->check(WholeNumberIn(1, std::numeric_limits<long long>::max()));
  AddWorkspaceFlag(app, flags);
}

void AddWorkspaceFlag(CLI::App& app, StackFlags& flags) {
  app.add_option("--workspace", flags.workspace,
                 "Work on this workspace's state (default: $CAIRN_WORKSPACE, else the one "
                 "`cairn workspace select` chose, else default)")
      ->type_name("NAME");
}

bool ChooseWorkspace(const std::string& flag, const std::vector<std::string>& paths,
                     ChosenWorkspace& chosen, std::string& error) {
  chosen = ChosenWorkspace();
  if (!flag.empty()) {
    chosen = {flag, "--workspace"};
  } else if (const char* env = std::getenv("CAIRN_WORKSPACE"); env && *env) {
    chosen = {env, "CAIRN_WORKSPACE"};
  } else {
    std::string root = ".";
    if (!paths.empty()) {
      const Env& env = PosixEnv();
      if (env.IsDirectory(paths[0])) {
        root = paths[0];
      } else if (std::string parent = std::filesystem::path(paths[0]).parent_path().string();
                 !parent.empty()) {
        root = parent;
      }
    }
    Result<std::optional<std::string>> selected = ReadSelectedWorkspace(PosixEnv(), root);
    if (!selected.ok()) {
      error = selected.status().message();
      return false;
    }
    if (*selected) chosen = {**selected, SelectedWorkspacePath(root)};
  }
  if (std::string problem = WorkspaceNameProblem(chosen.name); !problem.empty()) {
    error = chosen.source + ": " + problem;
    return false;
  }
  return true;
}

bool ToLoadOptions(const StackFlags& flags, LoadOptions& options, std::string& error) {
  options.paths = flags.paths;
  options.recursive = flags.recursive;
  options.var_files = flags.var_files;
  options.max_instances = flags.max_instances;
  if (options.max_instances == 0) {
    options.max_instances = kDefaultMaxInstances;
    if (const char* env = std::getenv("CAIRN_MAX_INSTANCES"); env && *env) {
      size_t n = 0;
      auto [end, ec] = std::from_chars(env, env + std::strlen(env), n);
      if (ec != std::errc() || *end != '\0' || n == 0) {
        error =
            std::string("CAIRN_MAX_INSTANCES=") + env + ": expected a whole number of at least 1";
        return false;
      }
      options.max_instances = n;
    }
  }
  ChosenWorkspace workspace;
  if (!ChooseWorkspace(flags.workspace, flags.paths, workspace, error)) return false;
  options.workspace = workspace.name;
  for (const auto& v : flags.vars) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--var " + v + ": expected NAME=VALUE";
      return false;
    }
    options.vars[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return true;
}

}  // namespace cairn::cli
