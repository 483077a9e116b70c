#include "cli/apply_output.h"

#include <iostream>

#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/report/apply_report.h"
#include "engine/report/plan_report.h"

namespace cairn::cli {

ApplyProgress::ApplyProgress(Mode mode, bool color, int total, std::string verb)
    : mode_(mode), color_(color), tally_(total), verb_(std::move(verb)) {}

void ApplyProgress::Handle(const ProgressEvent& e) {
  tally_.Add(e);
  if (mode_ == Mode::kJson) {
    std::cout << Redact(ProgressEventToJson(e).dump()) << std::endl;
    return;
  }
  if (mode_ == Mode::kLines) {
    if (std::string line = ProgressLine(e, color_); !line.empty()) std::cout << line << std::endl;
    return;
  }
  // Live: what a user must read stays; the rest is the counter line.
  if (KeepsProgressLine(e)) {
    if (live_shown_) std::cout << "\r\033[K";
    if (std::string line = ProgressLine(e, color_); !line.empty()) std::cout << line << std::endl;
    live_shown_ = false;
  }
  DrawLive(e.phase != ProgressEvent::Phase::kStart);
}

void ApplyProgress::DrawLive(bool force) {
  auto now = std::chrono::steady_clock::now();
  // At most ten redraws a second; every one that changes a count shows.
  if (!force && now - drawn_ < std::chrono::milliseconds(100)) return;
  drawn_ = now;
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - started_);
  std::cout << "\r\033[K" << tally_.LiveLine(verb_, elapsed) << std::flush;
  live_shown_ = true;
}

void ApplyProgress::Finish() {
  if (mode_ != Mode::kLive) return;
  DrawLive(true);
  std::cout << "\n" << std::flush;
  live_shown_ = false;
}

int ReportApply(const ApplyResult& result, bool destroy, const EngineSession& session, bool color,
                bool json) {
  if (!result.diagnostics.empty()) session.PrintDiagnostics(result.diagnostics);
  const std::set<std::string> sensitive = SensitiveOutputs(session.config());
  if (json) {
    std::cout << Redact(ApplySummaryToJson(result, sensitive).dump()) << std::endl;
  } else {
    std::cout << "\n" << ApplySummaryLine(result.summary, destroy, result.ok(), color) << "\n";
    if (!result.checks.empty()) std::cout << ChecksLine(result.checks, true) << "\n";
    std::cout << RenderApplyOutputs(result.outputs, sensitive);
  }
  return result.ok() ? 0 : 1;
}

}  // namespace cairn::cli
