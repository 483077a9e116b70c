// Plan reports for people: the text form printed by `cairn plan` and
// `cairn apply`, in the style
//     + instance.web[0]   create
//     ~ instance.api      update in-place
//         ~ plan: "s-1vcpu-1gb" -> "s-2vcpu-4gb"
//   -/+ network.core      replace (cidr forces replacement)
//     - ssh_key.old       delete
//   Plan: 1 to add, 1 to change, 1 to replace, 1 to destroy.
// Unknown values print as (known after apply); values of sensitive variables
// as (sensitive). Every line passes through the redactor.
#pragma once

#include <string>

#include "engine/plan/plan.h"

namespace cairn {

struct ReportOptions {
  bool color = false;
};

std::string RenderPlanText(const Plan& plan, const ReportOptions& opts = {});

// `v` with each string holding one of `sensitive` (the values of sensitive
// variables) replaced by "(sensitive)", at any depth.
Value MaskSensitive(const Value& v, const std::vector<std::string>& sensitive);

// `plan` made fit to show (`cairn plan --json`, `cairn show PLAN`): the
// variables a saved plan carries for apply are dropped, and each sensitive
// output's value is "(sensitive)". The values of sensitive variables are
// left for the caller's redaction (they may appear anywhere).
void PrepareForReading(Plan& plan);

// One value as shown in reports: JSON text, unknowns and sensitive values masked.
std::string RenderValue(const Value& v, const std::vector<std::string>& sensitive_values);

// "Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy." (", 2 to
// move" when there are moves, ", after 3 interrupted operations to
// complete" when the journal holds some), or the "No changes." sentence.
std::string PlanSummaryLine(const Plan& plan);

// "Checks: 1 failed (storage), 2 passed, 1 known after apply." or "" when
// there are none; `after_apply` words it for the checks an apply decided.
std::string ChecksLine(const std::vector<CheckResult>& results, bool after_apply = false);

// The journal's pending operations (Plan::pending) as the text report
// opens with them, or "" when there are none:
//   Interrupted operations, which 'cairn apply' completes first (then it plans again):
//     + instance.web[7]   create  # then destroyed: no longer in the manifests
//   The changes below are against the state as it is before them:
std::string RenderPendingOperations(const Plan& plan, const ReportOptions& opts = {});

// Markdown for CI comments: a summary line and a table of changes.
std::string RenderPlanMarkdown(const Plan& plan);

}  // namespace cairn
