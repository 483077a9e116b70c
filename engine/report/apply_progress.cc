#include "engine/report/apply_progress.h"

#include <algorithm>

#include "base/redact.h"

namespace cairn {

int PlannedOperations(const Plan& plan) {
  int n = 0;
  for (const auto& c : plan.changes) {
    if (c.action == Action::kReplace) {
      n += 2;
    } else if (c.action != Action::kNoOp) {
      n += 1;
    }
  }
  return n;
}

std::string ProgressVerb(const Plan& plan, bool destroy) {
  if (destroy) return "destroying";
  const bool creates_only =
      std::all_of(plan.changes.begin(), plan.changes.end(), [](const PlannedChange& c) {
        return c.action == Action::kCreate || c.action == Action::kNoOp;
      });
  return creates_only ? "creating" : "applying";
}

std::string ProgressLine(const ProgressEvent& e, bool color) {
  // "0.6s" under ten seconds, "42s" above.
  auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(e.elapsed).count() / 100;
  std::string secs = tenths < 100 ? std::to_string(tenths / 10) + "." + std::to_string(tenths % 10)
                                  : std::to_string(tenths / 10);
  std::string ing = e.operation == Action::kCreate   ? "creating"
                    : e.operation == Action::kUpdate ? "updating"
                                                     : "destroying";
  std::string noun = e.operation == Action::kCreate   ? "creation"
                     : e.operation == Action::kUpdate ? "update"
                                                      : "destruction";
  const std::string op = ActionName(e.operation);
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string line = std::string(bold) + e.address + ":" + reset + " ";
  switch (e.phase) {
    case ProgressEvent::Phase::kStart:
      line += ing + "...";
      break;
    case ProgressEvent::Phase::kWaiting:
      return "";  // the done line follows
    case ProgressEvent::Phase::kStillRunning:
      if (!e.message.empty()) return "";  // internal milestones stay quiet
      line += "still " + ing + "... [" + secs + "s elapsed]";
      break;
    case ProgressEvent::Phase::kDone:
      line += noun + " complete after " + secs + "s" + (e.id.empty() ? "" : " [id=" + e.id + "]");
      break;
    case ProgressEvent::Phase::kFailed:
      line += std::string(color ? "\033[31m" : "") + op + " failed" + reset + " after " + secs +
              "s: " + e.message;
      break;
    case ProgressEvent::Phase::kSkipped:
      line += "skipped: " + e.message;
      break;
    case ProgressEvent::Phase::kRecovered:
      line += "recovered the interrupted " + op + " (" + e.message + ")" +
              (e.id.empty() ? "" : " [id=" + e.id + "]");
      break;
  }
  return Redact(line);
}

bool KeepsProgressLine(const ProgressEvent& e) {
  return e.phase == ProgressEvent::Phase::kFailed || e.phase == ProgressEvent::Phase::kSkipped ||
         e.phase == ProgressEvent::Phase::kRecovered;
}

Value ProgressEventToJson(const ProgressEvent& e) {
  static const char* kNames[] = {"start",  "waiting", "still_running", "done",
                                 "failed", "skipped", "recovered"};
  Value j = {{"event", kNames[static_cast<int>(e.phase)]},
             {"address", e.address},
             {"operation", ActionName(e.operation)},
             {"elapsed_ms", e.elapsed.count()}};
  if (!e.id.empty()) j["id"] = e.id;
  if (!e.message.empty()) j["message"] = e.message;
  return j;
}

void ProgressTally::Add(const ProgressEvent& e) {
  const std::string key = ActionName(e.operation) + (" " + e.address);
  switch (e.phase) {
    case ProgressEvent::Phase::kWaiting:
      waiting_.insert(key);
      break;
    case ProgressEvent::Phase::kDone:
      waiting_.erase(key);
      ++done_;
      break;
    case ProgressEvent::Phase::kFailed:
      waiting_.erase(key);
      ++failed_;
      break;
    case ProgressEvent::Phase::kSkipped:
      ++skipped_;
      break;
    default:
      break;
  }
}

std::string ProgressTally::LiveLine(const std::string& verb, std::chrono::seconds elapsed) const {
  return verb + " " + std::to_string(done_) + "/" + std::to_string(total_) + ", " +
         std::to_string(waiting_.size()) + " waiting for provisioning, " + std::to_string(failed_) +
         " failed" + (skipped_ ? ", " + std::to_string(skipped_) + " skipped" : "") + ", " +
         std::to_string(elapsed.count()) + "s";
}

}  // namespace cairn
