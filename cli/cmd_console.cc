// cairn console: evaluates expressions against a stack, its variables,
// locals and recorded state (engine/operations/console.h does the
// evaluating; this file reads lines and prints). On a terminal, a prompt
// with line editing and history (libedit); otherwise one expression per
// line of stdin, one result per line of stdout, for scripts.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>

// libedit's readline interface (Debian's libedit-dev): line editing and
// history on a terminal, configurable in ~/.editrc under the name "cairn".
#include <editline/readline.h>

#include "base/diagnostic.h"
#include "base/redact.h"
#include "base/value.h"
#include "cli/command.h"
#include "cli/engine_session.h"
#include "cli/stack_options.h"
#include "engine/operations/console.h"

namespace cairn::cli {
namespace {

struct ConsoleFlags {
  StackFlags stack;
  bool json = false;
};

std::string Trimmed(const std::string& line) {
  size_t b = line.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = line.find_last_not_of(" \t\r\n");
  return line.substr(b, e - b + 1);
}

// Prints one expression's result: the value on stdout (one line), or its
// diagnostics (stderr; stdout with --json). True when it evaluated.
bool PrintResult(const StackConsole& console, const std::string& text, bool json, bool color) {
  ConsoleResult r = console.Eval(text);
  // Every printed line passes the redactor, as every message does: an API
  // token (${env.CAIRN_TOKEN}) or a sensitive variable's value made
  // nonsensitive() never reaches a terminal or a CI log.
  if (json) {
    Value line;
    if (r.ok()) {
      line = ConsoleJson(r.value);
    } else {
      Value diags = Value::parse(DiagnosticsToJson(r.diagnostics));
      line = {{"error", diags.at(0)}, {"errors", diags}};
    }
    std::cout << Redact(line.dump(-1, ' ', false, Value::error_handler_t::replace)) << std::endl;
    return r.ok();
  }
  if (r.ok()) {
    std::cout << Redact(EscapeForTerminal(ConsoleText(r.value))) << std::endl;
    return true;
  }
  SourceFiles sources;
  sources.Add(kConsoleFile, text);
  RenderOptions render;
  render.color = color;
  std::string out;
  for (const Diagnostic& d : r.diagnostics) out += RenderDiagnostic(d, sources, render);
  std::cout.flush();
  std::cerr << out << std::flush;
  return false;
}

// On a terminal: a prompt, libedit's line editing and in-memory history,
// until `exit` or end of input (Ctrl-D). An error is printed and the loop
// goes on.
int Interactive(const StackConsole& console, bool json, bool color) {
  rl_readline_name = "cairn";
  using_history();
  for (;;) {
    char* raw = readline("> ");
    if (raw == nullptr) {  // Ctrl-D
      std::cout << std::endl;
      return 0;
    }
    std::string line = Trimmed(raw);
    std::free(raw);
    if (line.empty()) continue;
    add_history(line.c_str());
    if (line == "exit") return 0;
    PrintResult(console, line, json, color);
  }
}

// Not a terminal: each line of stdin one expression, each evaluated even
// after one failed, until the end or `exit`; blank lines are skipped. 1
// when any failed.
int Piped(const StackConsole& console, bool json, bool color) {
  bool failed = false;
  for (std::string raw; std::getline(std::cin, raw);) {
    std::string line = Trimmed(raw);
    if (line.empty()) continue;
    if (line == "exit") break;
    if (!PrintResult(console, line, json, color)) failed = true;
  }
  return failed ? 1 : 0;
}

int RunConsole(const ConsoleFlags& f, const GlobalOptions& global) {
  // Reads only: no API, and a stack never applied gets no state created.
  auto s = EngineSession::Open(f.stack, global, {.needs_api = false, .create_state = false});
  if (!s) return 1;
  auto state = s->LoadState();
  if (!state) return 1;
  StackConsole console(s->config(), *state, s->load().registry.get());
  const bool color = UseColor(global, STDERR_FILENO);
  if (isatty(STDIN_FILENO) == 1) return Interactive(console, f.json, color);
  return Piped(console, f.json, color);
}

std::function<int()> SetupConsole(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<ConsoleFlags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json,
               "Print each result as one JSON object: {\"value\", \"type\", \"sensitive\", "
               "\"known\"}, or {\"error\", \"errors\"}");
  sub.footer(
      "Evaluates expressions (what goes inside ${...} in a manifest) against the stack: its\n"
      "variables (with --var, --var-file...), its locals, the resources' values recorded in\n"
      "the state, path.module, path.root and every function. Nothing is sent to the API and\n"
      "nothing is written: data sources, module outputs and what the state does not hold yet\n"
      "are (known after apply); sensitive values print as (sensitive value).\n\n"
      "On a terminal: a prompt with line editing and history; `exit` or Ctrl-D quits.\n"
      "Otherwise one expression per line of stdin and one result per line of stdout (errors\n"
      "on stderr), every line evaluated; exit 1 when any failed.\n\n"
      "Examples:\n"
      "  cairn console stacks/web\n"
      "  echo 'instance.web[0].ipv4' | cairn console stacks/web\n"
      "  echo 'cidrsubnet(var.base, 8, 1)' | cairn console --var base=10.0.0.0/8\n"
      "  printf '%s\\n' 'local.prefix' 'length(instance.web)' | cairn console --json");
  return [f, &global] { return RunConsole(*f, global); };
}

}  // namespace

CAIRN_COMMAND("console", "Evaluate expressions against the stack and its state", 57, SetupConsole);

}  // namespace cairn::cli
