// cairn: the command-line entry point. Builds the CLI from the command
// registry (cli/command.h), parses, initialises logging and runs one command.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <tuple>

#include "base/log.h"
#include "base/redact.h"
#include "base/schema/suggest.h"
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

// The option `name` ("--log-level") of `app` or of a command above it, which
// passes its options through (fallthrough).
const CLI::Option* FindOption(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(name)) return opt;
  }
  return nullptr;
}

// Where a command is expected (after `cairn`, or after `cairn state`), a word
// that names none: "unknown command" with what it may have meant, rather
// than CLI11's "The following argument was not expected". Empty when every
// such word is a command.
std::string UnknownCommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "cairn";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return "";
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* opt = FindOption(at, word.substr(0, word.find('=')));
      if (opt && opt->get_expected_min() > 0 && word.find('=') == std::string::npos) ++i;
      continue;
    }
    auto commands = at->get_subcommands([](const CLI::App*) { return true; });
    if (commands.empty()) return "";
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* c : commands) {
      if (c->get_name() == word) next = c;
      names.push_back(c->get_name());
    }
    if (next != nullptr) {
      at = next;
      path += " " + word;
      continue;
    }
    // A command of a command ("show" for "state show"), or a misspelling.
    std::string hint;
    for (const CLI::App* c : commands) {
      for (const CLI::App* sub : c->get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word && hint.empty()) {
          hint = "did you mean '" + path + " " + c->get_name() + " " + word + "'?";
        }
      }
    }
    if (hint.empty()) {
      if (auto near = SuggestName(word, names)) hint = "did you mean '" + path + " " + *near + "'?";
    }
    return "unknown command \"" + word + "\"" + (path == "cairn" ? "" : " for '" + path + "'") +
           (hint.empty() ? "" : "; " + hint);
  }
  return "";
}

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
  app.add_flag("--insecure-http", global.insecure_http,
               "Send the API token over plain http to a host that is not loopback (refused "
               "without: use https://)");

  auto& registry = CommandRegistry();
  // By order, then name: the registrars run in whatever order the linker
  // (or a unity build) put their files, so that order must not show.
  std::sort(registry.begin(), registry.end(), [](const CommandInfo& a, const CommandInfo& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const auto& cmd : registry) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
    // Global options are accepted after the command name too.
    sub->fallthrough();
    runners.emplace_back(sub, cmd.setup(*sub, global));
  }
  // One command per run: a later word that names a command too (`cairn
  // validate apply`, a stack directory called apply) is the first command's
  // argument, not a second command. Set after the commands are added, which
  // would otherwise inherit the bound.
  app.require_subcommand(0, 1);

  if (std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
    std::cerr << "error: " << Redact(unknown) << "\nRun 'cairn --help' for the commands.\n";
    return 1;
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
    // Written as Cairn's own messages are: "error: " and a lowercase start.
    std::string message = e.what();
    if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z' &&
        (message.size() < 2 || !(message[1] >= 'A' && message[1] <= 'Z'))) {
      message[0] = static_cast<char>(message[0] - 'A' + 'a');
    }
    std::cerr << "error: " << Redact(message) << "\n"
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
