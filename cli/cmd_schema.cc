// cairn schema: show the resource kinds and their JSON Schemas.
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "cli/command.h"

namespace cairn::cli {
namespace {

std::function<int()> SetupSchema(CLI::App& sub, const GlobalOptions&) {
  auto kind = std::make_shared<std::string>();
  sub.add_option("KIND", *kind, "A resource kind; without it, list the kinds");
  sub.footer(
      "Without KIND, lists the resource kinds. With KIND, prints its JSON Schema: the spec "
      "fields,\n"
      "their types and formats, and under \"x-cairn\" the computed attributes, the immutable "
      "fields,\n"
      "the reference targets and the API wire mapping.\n\n"
      "Example:\n  cairn schema instance");
  return [kind]() {
    auto reg = SchemaRegistry::Embedded();
    if (!reg.ok()) {
      std::cerr << "error: cannot load the resource schemas: " << reg.status().message() << "\n";
      return 1;
    }
    const SchemaRegistry& r = **reg;
    if (kind->empty()) {
      size_t width = 0;
      for (const auto& k : r.kinds()) width = std::max(width, k.size());
      std::cout << "Resource kinds:\n";
      for (const auto& k : r.kinds()) {
        std::cout << "  " << k << std::string(width + 2 - k.size(), ' ') << r.Description(k)
                  << "\n";
      }
      std::cout << "Run 'cairn schema KIND' for a kind's JSON Schema.\n";
      return 0;
    }
    if (!r.HasKind(*kind)) {
      std::string hint = DidYouMean(*kind, r.kinds());
      std::cerr << "error: unknown kind \"" << *kind << "\"" << (hint.empty() ? "" : "; " + hint)
                << "\nknown kinds:";
      for (const auto& k : r.kinds()) std::cerr << " " << k;
      std::cerr << "\n";
      return 1;
    }
    std::cout << r.Document(*kind).dump(2) << "\n";
    return 0;
  };
}

}  // namespace

CAIRN_COMMAND("schema", "Show the resource kinds and their JSON Schemas", 80, SetupSchema);

}  // namespace cairn::cli
