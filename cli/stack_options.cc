#include "cli/stack_options.h"

#include <CLI/CLI.hpp>

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
}

bool ToLoadOptions(const StackFlags& flags, LoadOptions& options, std::string& error) {
  options.paths = flags.paths;
  options.recursive = flags.recursive;
  options.var_files = flags.var_files;
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
