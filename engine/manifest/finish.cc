#include "engine/manifest/finish.h"

#include <tuple>

#include "engine/manifest/yaml_value.h"

namespace cairn {

std::vector<Diagnostic> FinishDiagnostics(std::vector<Diagnostic> diags,
                                          const std::set<std::string>& module_files) {
  SortDiagnostics(diags);
  std::vector<Diagnostic> out;
  std::set<std::tuple<std::string, int, int, std::string, std::string, std::string>> seen;
  for (auto& d : diags) {
    d.summary = ValidUtf8(d.summary);
    d.detail = ValidUtf8(d.detail);
    const bool in_module = module_files.count(d.location.file) > 0;
    if (seen.insert({d.location.file, d.location.line, d.location.column, d.code,
                     in_module ? "" : d.summary, in_module ? "" : d.detail})
            .second) {
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace cairn
