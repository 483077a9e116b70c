// cairn: the command-line entry point. Builds the CLI from the command
// registry (cli/command.h), parses, initialises logging and runs one command.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "base/log.h"
#include "base/redact.h"
#include "cli/command.h"

namespace cairn::cli {

std::vector<CommandInfo>& CommandRegistry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

bool UseColor(const GlobalOptions& global, int fd) {
  if (global.no_color) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return isatty(fd) == 1;
}

namespace {

int Run(int argc, char** argv) {
  CLI::App app{
      "Cairn: declarative infrastructure as code for the Infrastructure Management API,\n"
      "and a local control-plane server for that API (cairn serve).",
      "cairn"};
  app.set_version_flag("--version", std::string("cairn ") + CAIRN_VERSION);
  app.footer("Run 'cairn COMMAND --help' for a command's options and examples.");

  GlobalOptions global;
  app.add_option("--log-level", global.log_level,
                 "Log level: trace, debug, info, warn, error, critical, off "
                 "(default: $CAIRN_LOG or warn)");
  app.add_flag("--no-color", global.no_color, "Never color output (NO_COLOR also works)");

  auto& registry = CommandRegistry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const auto& cmd : registry) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
    // Global options are accepted after the command name too.
    sub->fallthrough();
    runners.emplace_back(sub, cmd.setup(*sub, global));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << Redact(e.what()) << "\n"
              << "Run 'cairn --help' for usage.\n";
    return 1;
  }

  if (Status st = InitLogging(global.log_level); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  std::cerr << "error: no command given\nRun 'cairn --help' for usage.\n";
  return 1;
}

}  // namespace
}  // namespace cairn::cli

int main(int argc, char** argv) {
  try {
    return cairn::cli::Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: internal error: " << cairn::Redact(e.what()) << ", please report\n";
    return 1;
  }
}
