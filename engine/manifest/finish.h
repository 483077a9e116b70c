// Finishing, the last stage of loading a stack: the diagnostics every other
// stage made, as LoadResult gives them. Diagnostics in, diagnostics out.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"

namespace cairn {

// `diags` sorted (SortDiagnostics: by file, line, column and code, stably),
// their summaries and details made valid UTF-8 (manifests may hold bytes
// that are not, and the JSON form of a diagnostic must be), and each
// repetition dropped: one with the file, line, column, code, summary and
// detail of an earlier one, or, in one of `module_files` (whose documents
// are checked once per module instance, the messages differing only in the
// instance's path), the file, line, column and code alone.
std::vector<Diagnostic> FinishDiagnostics(std::vector<Diagnostic> diags,
                                          const std::set<std::string>& module_files);

}  // namespace cairn
