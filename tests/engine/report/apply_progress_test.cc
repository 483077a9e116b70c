// What apply and destroy print while they run and when they end: the
// progress lines, the live line's counts, the JSON events and summary.
// (The CLI only writes these: tests/cli/engine_commands_test.cc runs one
// apply of each mode end to end.)
#include "engine/report/apply_progress.h"

#include <catch2/catch.hpp>

#include "base/redact.h"
#include "engine/report/apply_report.h"

namespace apply_progress_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;
using Phase = ProgressEvent::Phase;

namespace {

ProgressEvent Event(Phase phase, const std::string& address, Action operation,
                    std::chrono::milliseconds elapsed = 0ms, std::string id = "",
                    std::string message = "") {
  ProgressEvent e;
  e.phase = phase;
  e.address = address;
  e.operation = operation;
  e.elapsed = elapsed;
  e.id = std::move(id);
  e.message = std::move(message);
  return e;
}

Plan PlanOf(std::vector<Action> actions) {
  Plan plan;
  int n = 0;
  for (Action a : actions) {
    PlannedChange c;
    c.address = "network.n" + std::to_string(n++);
    c.action = a;
    plan.changes.push_back(std::move(c));
  }
  return plan;
}

}  // namespace

TEST_CASE("apply progress: the operations a plan makes, a replace counting two") {
  CHECK(PlannedOperations(PlanOf({})) == 0);
  CHECK(PlannedOperations(PlanOf({Action::kNoOp, Action::kCreate, Action::kUpdate, Action::kDelete,
                                  Action::kReplace})) == 5);
}

TEST_CASE("apply progress: the verb says what the run does") {
  CHECK(ProgressVerb(PlanOf({Action::kCreate, Action::kNoOp}), false) == "creating");
  CHECK(ProgressVerb(PlanOf({}), false) == "creating");
  CHECK(ProgressVerb(PlanOf({Action::kCreate, Action::kUpdate}), false) == "applying");
  CHECK(ProgressVerb(PlanOf({Action::kReplace}), false) == "applying");
  CHECK(ProgressVerb(PlanOf({Action::kDelete}), true) == "destroying");
}

TEST_CASE("apply progress: a line per step, seconds with a tenth under ten") {
  CHECK(ProgressLine(Event(Phase::kStart, "instance.web", Action::kCreate), false) ==
        "instance.web: creating...");
  CHECK(ProgressLine(Event(Phase::kStart, "volume.v", Action::kUpdate), false) ==
        "volume.v: updating...");
  CHECK(ProgressLine(Event(Phase::kStart, "volume.v", Action::kDelete), false) ==
        "volume.v: destroying...");
  CHECK(ProgressLine(Event(Phase::kStillRunning, "volume.v", Action::kDelete, 10'000ms), false) ==
        "volume.v: still destroying... [10s elapsed]");
  CHECK(ProgressLine(Event(Phase::kDone, "instance.web", Action::kCreate, 640ms, "inst_1"),
                     false) == "instance.web: creation complete after 0.6s [id=inst_1]");
  CHECK(ProgressLine(Event(Phase::kDone, "volume.v", Action::kUpdate, 9'990ms), false) ==
        "volume.v: update complete after 9.9s");
  CHECK(ProgressLine(Event(Phase::kDone, "volume.v", Action::kDelete, 42'500ms), false) ==
        "volume.v: destruction complete after 42s");
  CHECK(ProgressLine(Event(Phase::kFailed, "instance.web", Action::kCreate, 1'200ms, "", "quota"),
                     false) == "instance.web: create failed after 1.2s: quota");
  CHECK(ProgressLine(
            Event(Phase::kSkipped, "instance.web", Action::kCreate, 0ms, "", "network.n failed"),
            false) == "instance.web: skipped: network.n failed");
  CHECK(ProgressLine(
            Event(Phase::kRecovered, "instance.web", Action::kCreate, 0ms, "inst_2", "replayed"),
            false) == "instance.web: recovered the interrupted create (replayed) [id=inst_2]");
}

TEST_CASE("apply progress: waits and internal milestones print nothing") {
  CHECK(ProgressLine(Event(Phase::kWaiting, "instance.web", Action::kCreate), false).empty());
  CHECK(
      ProgressLine(
          Event(Phase::kStillRunning, "instance.web", Action::kCreate, 1s, "", "journaled"), false)
          .empty());
}

TEST_CASE("apply progress: color marks the address and a failure and secrets are redacted") {
  CHECK(ProgressLine(Event(Phase::kStart, "network.n", Action::kCreate), true) ==
        "\033[1mnetwork.n:\033[0m creating...");
  CHECK(ProgressLine(Event(Phase::kFailed, "network.n", Action::kCreate, 0ms, "", "no"), true) ==
        "\033[1mnetwork.n:\033[0m \033[31mcreate failed\033[0m after 0.0s: no");
  const std::string token = "cairn_" + std::string(43, 'q');
  const std::string line = ProgressLine(
      Event(Phase::kFailed, "network.n", Action::kCreate, 0ms, "", "sent " + token), false);
  CHECK(line.find(token) == std::string::npos);
  CHECK(line.find("[REDACTED]") != std::string::npos);
}

TEST_CASE("apply progress: a live display keeps failures, skips and recoveries") {
  CHECK(KeepsProgressLine(Event(Phase::kFailed, "a.b", Action::kCreate)));
  CHECK(KeepsProgressLine(Event(Phase::kSkipped, "a.b", Action::kCreate)));
  CHECK(KeepsProgressLine(Event(Phase::kRecovered, "a.b", Action::kCreate)));
  for (Phase p : {Phase::kStart, Phase::kWaiting, Phase::kStillRunning, Phase::kDone}) {
    CHECK_FALSE(KeepsProgressLine(Event(p, "a.b", Action::kCreate)));
  }
}

TEST_CASE("apply progress: the tally counts done, failed, skipped and what is waiting") {
  ProgressTally tally(5);
  tally.Add(Event(Phase::kStart, "network.a", Action::kCreate));
  tally.Add(Event(Phase::kWaiting, "network.a", Action::kCreate));
  tally.Add(Event(Phase::kStart, "network.b", Action::kCreate));
  tally.Add(Event(Phase::kWaiting, "network.b", Action::kCreate));
  tally.Add(Event(Phase::kWaiting, "network.b", Action::kCreate));  // said twice, counted once
  CHECK(tally.waiting() == 2);
  CHECK(tally.LiveLine("creating", 3s) == "creating 0/5, 2 waiting for provisioning, 0 failed, 3s");
  tally.Add(Event(Phase::kDone, "network.a", Action::kCreate));
  tally.Add(Event(Phase::kFailed, "network.b", Action::kCreate));
  tally.Add(Event(Phase::kSkipped, "instance.c", Action::kCreate));
  CHECK(tally.done() == 1);
  CHECK(tally.failed() == 1);
  CHECK(tally.skipped() == 1);
  CHECK(tally.waiting() == 0);
  CHECK(tally.LiveLine("applying", 12s) ==
        "applying 1/5, 0 waiting for provisioning, 1 failed, 1 skipped, 12s");
  // A replace's delete and create of one address wait apart.
  ProgressTally replace(2);
  replace.Add(Event(Phase::kWaiting, "volume.v", Action::kDelete));
  replace.Add(Event(Phase::kWaiting, "volume.v", Action::kCreate));
  CHECK(replace.waiting() == 2);
  replace.Add(Event(Phase::kDone, "volume.v", Action::kDelete));
  CHECK(replace.waiting() == 1);
}

TEST_CASE("apply progress: each event as one JSON object") {
  Value start = ProgressEventToJson(Event(Phase::kStart, "network.a", Action::kCreate, 5ms));
  CHECK(start == Value{{"event", "start"},
                       {"address", "network.a"},
                       {"operation", "create"},
                       {"elapsed_ms", 5}});
  Value done =
      ProgressEventToJson(Event(Phase::kDone, "network.a", Action::kCreate, 900ms, "net_1"));
  CHECK(done["event"] == "done");
  CHECK(done["id"] == "net_1");
  CHECK_FALSE(done.contains("message"));
  const char* names[] = {"start",  "waiting", "still_running", "done",
                         "failed", "skipped", "recovered"};
  for (int p = 0; p <= static_cast<int>(Phase::kRecovered); ++p) {
    CHECK(ProgressEventToJson(Event(static_cast<Phase>(p), "a.b", Action::kDelete, 0ms, "",
                                    "m"))["event"] == names[p]);
  }
}

TEST_CASE("apply summary: the JSON event counts everything and masks sensitive outputs") {
  ApplyResult result;
  result.summary.created = 2;
  result.summary.updated = 1;
  result.summary.replaced = 1;
  result.summary.deleted = 3;
  result.summary.moved = 1;
  result.summary.forgotten = 4;
  result.summary.imported = 5;
  result.summary.recovered = 2;
  result.summary.failed = 1;
  result.summary.held_back = 1;
  result.outputs = {{"ip", "10.0.0.1"}, {"password", "hunter2"}};
  Value j = ApplySummaryToJson(result, {"password"});
  CHECK(j == Value{{"event", "summary"},
                   {"ok", true},
                   {"added", 2},
                   {"changed", 1},
                   {"replaced", 1},
                   {"destroyed", 3},
                   {"moved", 1},
                   {"forgotten", 4},
                   {"imported", 5},
                   {"recovered", 2},
                   {"failed", 1},
                   {"held_back", 1},
                   {"skipped", 0},
                   {"interrupted", false},
                   {"outputs", {{"ip", "10.0.0.1"}, {"password", "(sensitive)"}}},
                   {"checks", Value::array()}});
  result.summary.interrupted = true;
  CHECK(ApplySummaryToJson(result, {})["ok"] == false);
  CHECK(ApplySummaryToJson(result, {})["outputs"]["password"] == "hunter2");
}

TEST_CASE("apply summary: the sensitive outputs are the ones the stack declares so") {
  StackConfig config;
  config.outputs.push_back({.name = "ip", .value = "x"});
  config.outputs.push_back({.name = "password", .value = "y", .sensitive = true});
  CHECK(SensitiveOutputs(config) == std::set<std::string>{"password"});
}

}  // namespace apply_progress_test
