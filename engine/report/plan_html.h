// `cairn plan --html FILE`: the plan as one self-contained HTML page for
// people reviewing a change (a CI artifact): the summary, every change with
// its attribute diff, the outputs that change, and the dependency graph as
// inline SVG, colored by action. No script, no stylesheet, image or font is
// fetched: the page renders offline. Values are masked as in the text
// report, and the page passes through the redactor.
#pragma once

#include <string>

#include "engine/plan/plan.h"
#include "engine/policy/policy.h"

namespace cairn {

// With `policies` (cairn plan --policy), their results as a table too.
std::string RenderPlanHtml(const Plan& plan, const std::vector<PolicyResult>& policies = {});

}  // namespace cairn
