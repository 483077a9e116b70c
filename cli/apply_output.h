// How apply and destroy print what happens: the progress while they run and
// the summary at the end. What each line says is the engine's
// (engine/report/apply_progress.h, apply_report.h); this writes it to
// stdout in the chosen mode and redraws a terminal's live line.
#pragma once

#include <chrono>
#include <string>

#include "engine/apply/apply.h"
#include "engine/report/apply_progress.h"

namespace cairn::cli {

class EngineSession;

// Progress on stdout, in one of three modes:
//   kLines  a line per operation step (not a terminal: logs, CI);
//   kLive   on a terminal, one line rewritten in place ("creating 143/200,
//           57 waiting for provisioning, 0 failed, 12s"), at most ten times
//           a second, with failures and skips printed above it;
//   kJson   one JSON object per event (--json), for machines.
class ApplyProgress {
 public:
  enum class Mode { kLines, kLive, kJson };
  // `total`: the operations the run makes (PlannedOperations); `verb`: what
  // the live line says it is doing (ProgressVerb).
  ApplyProgress(Mode mode, bool color, int total, std::string verb);
  void Handle(const ProgressEvent& e);
  // Ends the live line; call once the apply has returned.
  void Finish();

 private:
  void DrawLive(bool force);

  Mode mode_;
  bool color_;
  ProgressTally tally_;
  std::string verb_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point drawn_{};
  bool live_shown_ = false;
};

// Prints an apply's diagnostics, then its summary and outputs (with `json`,
// the summary event: ApplySummaryToJson); returns the exit code.
int ReportApply(const ApplyResult& result, bool destroy, const EngineSession& session, bool color,
                bool json = false);

}  // namespace cairn::cli
