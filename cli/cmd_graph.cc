// cairn graph: print a stack's dependency graph (DOT or JSON).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/schema/schema_registry.h"
#include "cli/command.h"
#include "cli/stack_options.h"
#include "engine/manifest/loader.h"
#include "engine/report/graph_output.h"

namespace cairn::cli {
namespace {

std::function<int()> SetupGraph(CLI::App& sub, const GlobalOptions& global) {
  auto flags = std::make_shared<StackFlags>();
  auto format = std::make_shared<std::string>("dot");
  AddStackFlags(sub, *flags);
  sub.add_option("--format", *format, "Output format: dot (Graphviz) or json")
      ->check(CLI::IsMember({"dot", "json"}))
      ->capture_default_str();
  sub.footer(
      "Prints the dependency graph of a stack: one node per resource instance, an edge from each\n"
      "resource to what it depends on (references and depends_on).\n\n"
      "Example:\n  cairn graph stacks/web | dot -Tsvg > graph.svg");
  return [flags, format, &global]() {
    LoadOptions options;
    std::string error;
    if (!ToLoadOptions(*flags, options, error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    LoadResult result = LoadStack(options);
    if (!result.diagnostics.empty()) {
      RenderOptions render;
      render.color = UseColor(global, STDERR_FILENO);
      std::cerr << RenderDiagnostics(result.diagnostics, result.sources, render);
    }
    if (!result.ok()) return 1;
    if (*format == "json") {
      std::cout << GraphToJson(result.config);
    } else {
      std::cout << GraphToDot(result.config, result.registry->kinds());
    }
    return 0;
  };
}

}  // namespace

CAIRN_COMMAND("graph", "Print the dependency graph of a stack (DOT or JSON)", 65, SetupGraph);

}  // namespace cairn::cli
