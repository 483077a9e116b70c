// A drift report (engine/drift) for people (text, colour optional) and for
// tools (JSON, `cairn drift --json`; its format is versioned by
// DriftReport::kFormatVersion and written down in docs/plan-format.md).
#pragma once

#include <string>

#include "base/value.h"
#include "engine/drift/drift.h"

namespace cairn {

std::string RenderDriftText(const DriftReport& report, bool color);
// `cairn apply --refresh-only`: what differs, and what the commit records.
std::string RenderRefreshOnlyText(const DriftReport& report, const StateCommit& commit, bool color);
Value DriftToJson(const DriftReport& report);

}  // namespace cairn
