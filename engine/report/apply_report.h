// The end of an apply or a destroy for people: the summary line, counting
// what happened (the operations of an interrupted run completed first
// included, moves, what failed and what never started), and the outputs,
// rendered as plans render values (engine/report/plan_report.h). Every
// line passes through the redactor.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/value.h"
#include "engine/apply/apply.h"
#include "engine/manifest/config.h"

namespace cairn {

// "Apply complete! Resources: 2 added, 0 changed, 0 replaced, 1 destroyed."
// (", 1 moved" with moves; a destroy counts only what it destroys: "Destroy
// complete! Resources: 3 destroyed."), "(4 of them recovered from an
// interrupted run)" when there were; on failure the failed and skipped
// ones, and after an interruption how to finish. `color`: ANSI colours.
std::string ApplySummaryLine(const ApplySummary& summary, bool destroy, bool ok, bool color);

// "\nOutputs:\n  name = value\n..." ("" without outputs); the `sensitive`
// ones as (sensitive).
std::string RenderApplyOutputs(const std::map<std::string, Value>& outputs,
                               const std::set<std::string>& sensitive);

// The outputs `config` declares sensitive: those the two renderings above
// and below mask.
std::set<std::string> SensitiveOutputs(const StackConfig& config);

// The summary event of `apply --json` and `destroy --json`, the run's last
// line: {"event": "summary", "ok", "added", "changed", "replaced",
// "destroyed", "moved", "recovered", "failed", "held_back", "skipped",
// "interrupted", "outputs": {name: value, the `sensitive` ones
// "(sensitive)"}, "checks": the check results (CheckResultsToJson)}. Not
// redacted: the caller redacts the text it prints.
Value ApplySummaryToJson(const ApplyResult& result, const std::set<std::string>& sensitive);

}  // namespace cairn
