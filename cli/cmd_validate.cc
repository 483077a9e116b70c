// cairn validate: load and check a stack without calling the API.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "base/diagnostic.h"
#include "base/discard.h"
#include "base/value.h"
#include "cli/command.h"
#include "cli/stack_options.h"
#include "engine/manifest/loader.h"

namespace cairn::cli {
namespace {

std::string Plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::function<int()> SetupValidate(CLI::App& sub, const GlobalOptions& global) {
  auto flags = std::make_shared<StackFlags>();
  auto json = std::make_shared<bool>(false);
  AddStackFlags(sub, *flags);
  sub.add_flag("--json", *json, "Print the result and every diagnostic as JSON on stdout");
  sub.footer(
      "Checks every manifest (syntax, schemas, variables, references, dependency cycles, key "
      "material)\n"
      "before any network call. Exit 0 when valid, 1 otherwise.\n\n"
      "Example:\n  cairn validate stacks/web --var region=eu-central");
  return [flags, json, &global]() {
    LoadOptions options;
    std::string error;
    if (!ToLoadOptions(*flags, options, error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    LoadResult result = LoadStack(options);
    std::map<std::string, size_t> kinds;
    for (const auto& r : result.config.resources) ++kinds[r.kind];
    if (*json) {
      Value out = {{"valid", result.ok()},
                   {"resources", result.config.resources.size()},
                   {"kinds", kinds},
                   {"files", result.config.files.size()},
                   {"diagnostics", Value::parse(DiagnosticsToJson(result.diagnostics))}};
      std::cout << out.dump(2, ' ', false, Value::error_handler_t::replace) << "\n";
      return result.ok() ? 0 : 1;
    }
    if (!result.diagnostics.empty()) {
      RenderOptions render;
      render.color = UseColor(global, STDERR_FILENO);
      std::cerr << RenderDiagnostics(result.diagnostics, result.sources, render);
    }
    if (!result.ok()) return 1;
    std::string by_kind;
    for (const auto& [kind, n] : kinds)
      by_kind += (by_kind.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    bool color = UseColor(global, STDOUT_FILENO);
    std::cout << (color ? "\033[1;32mValid:\033[0m " : "Valid: ")
              << Plural(result.config.resources.size(), "resource")
              << (by_kind.empty() ? "" : " (" + by_kind + ")") << " in "
              << Plural(result.config.files.size(), "file") << ".\n";
    DiscardAtExit(std::move(result));
    return 0;
  };
}

}  // namespace

CAIRN_COMMAND("validate", "Check manifests without calling the API", 10, SetupValidate);

}  // namespace cairn::cli
