// The command registry of the `cairn` executable. Each command lives in its
// own cli/cmd_<name>.cc and registers itself with CAIRN_COMMAND; main.cc only
// builds the CLI11 app from the registry, parses, and runs the chosen
// command. Commands wire real implementations together and hold no logic of
// their own beyond that.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cairn::cli {

// Options every command accepts (set before the command runs).
struct GlobalOptions {
  std::string log_level;  // --log-level; empty means CAIRN_LOG or "warn"
  bool no_color = false;  // --no-color (NO_COLOR in the environment also disables color)
  // --insecure-http: send the API token over plain http to a host that is
  // not loopback (CheckTokenTransport refuses it otherwise).
  bool insecure_http = false;
};

// True when color output is allowed on the stream: a TTY, no NO_COLOR and no --no-color.
bool UseColor(const GlobalOptions& global, int fd);

// Adds a subcommand's options to `sub` and returns the function that runs it,
// returning the process exit code.
using CommandSetup = std::function<std::function<int()>(CLI::App& sub, const GlobalOptions&)>;

struct CommandInfo {
  std::string name;
  std::string description;
  int order;  // position in `cairn --help` (each command's own; ties go by name)
  CommandSetup setup;
};

std::vector<CommandInfo>& CommandRegistry();

struct CommandRegistrar {
  explicit CommandRegistrar(CommandInfo info) { CommandRegistry().push_back(std::move(info)); }
};

}  // namespace cairn::cli

#define CAIRN_COMMAND_CONCAT_(a, b) a##b
#define CAIRN_COMMAND_CONCAT(a, b) CAIRN_COMMAND_CONCAT_(a, b)
// CAIRN_COMMAND("validate", "Check manifests without calling the API", 10, SetupValidate);
// The registrar's name is unique in its translation unit, which a unity
// build makes of several files (__LINE__ could repeat).
#define CAIRN_COMMAND(name, description, order, setup)        \
  static ::cairn::cli::CommandRegistrar CAIRN_COMMAND_CONCAT( \
      cairn_command_, __COUNTER__)(::cairn::cli::CommandInfo{name, description, order, setup})
