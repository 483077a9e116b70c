// cairn plan: what apply would change, without changing anything.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/engine_session.h"
#include "engine/plan/refresh.h"
#include "engine/redact.h"
#include "engine/report/plan_report.h"

namespace cairn::cli {

// Shared by plan, apply and destroy: refresh (unless disabled) and plan.
std::optional<Plan> BuildPlan(EngineSession& session, bool refresh, bool destroy,
                              const std::vector<std::string>& targets, std::stop_token stop) {
  auto state = session.store().Load();
  if (!state.ok()) {
    std::cerr << "cairn: error: cannot read the state: " << state.status().message() << "\n";
    return std::nullopt;
  }
  LiveView live;
  if (refresh && !state->resources.empty()) {
    RefreshOptions ro;
    ro.canonical_id = session.canonical_id();
    ro.stop = stop;
    RefreshResult r = Refresh(*state, session.provider(), ro);
    if (!r.ok()) {
      session.PrintDiagnostics(r.diagnostics);
      return std::nullopt;
    }
    live = std::move(r.live);
  }
  PlanOptions po = session.plan_options();
  po.refresh = refresh;
  po.destroy = destroy;
  po.targets = targets;
  PlanResult pr = MakePlan(session.config(), *state, live, session.kinds(), po);
  if (!pr.diagnostics.empty()) session.PrintDiagnostics(pr.diagnostics);
  if (!pr.ok()) return std::nullopt;
  pr.plan.stack = session.stack_root();
  return std::move(pr.plan);
}

// Writes `content` to `path` through a temporary file and a rename, so a
// crash never leaves a half-written plan; mode 0600.
bool WriteFileAtomically(const std::string& path, const std::string& content, std::string& error) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot write " + tmp;
      return false;
    }
    out << content;
    out.flush();
    if (!out) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::permissions(tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace, ec);
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

namespace {

std::function<int()> SetupPlan(CLI::App& sub, const GlobalOptions& global) {
  struct Flags {
    StackFlags stack;
    bool json = false, markdown = false, detailed = false, refresh = true, destroy = false;
    std::string out;
    std::vector<std::string> targets;
  };
  auto f = std::make_shared<Flags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json, "Print the plan as JSON (docs/plan-format.md)");
  sub.add_flag("--markdown", f->markdown, "Print the plan as Markdown (for pull request comments)");
  sub.add_option("--out", f->out, "Save the plan to FILE for 'cairn apply FILE'")->type_name("FILE");
  sub.add_flag("--detailed-exitcode", f->detailed, "Exit 0 with no changes, 2 with changes, 1 on error");
  sub.add_option("--refresh", f->refresh, "Read live resources first (default true; --refresh=false uses the state)")
      ->default_val(true);
  sub.add_option("--target", f->targets, "Plan only ADDRESS and what it depends on (repeatable)")
      ->type_name("ADDRESS");
  sub.add_flag("--destroy", f->destroy, "Plan the destruction of everything in the state");
  sub.footer(
      "Reads CAIRN_ENDPOINT and CAIRN_TOKEN (or the provider document's settings).\n\n"
      "Examples:\n"
      "  cairn plan examples/quickstart\n"
      "  cairn plan --out web.plan --detailed-exitcode   # in CI: 2 means changes\n"
      "  cairn plan --json | jq .summary");
  return [f, &global]() {
    auto session = EngineSession::Open(f->stack, global, {.needs_api = f->refresh});
    if (!session) return 1;
    auto pending = session->store().PendingJournal();
    if (pending.ok() && !pending->empty()) {
      std::cerr << "cairn: warning: " << pending->size()
                << " operation(s) of an interrupted apply are unfinished; 'cairn apply' completes "
                   "them first, and this plan may change after that\n";
    }
    auto plan = BuildPlan(*session, f->refresh, f->destroy, f->targets, {});
    if (!plan) return 1;
    if (!f->out.empty()) {
      std::string error;
      if (!WriteFileAtomically(f->out, PlanToJson(*plan).dump(2) + "\n", error)) {
        std::cerr << "cairn: error: " << error << "\n";
        return 1;
      }
    }
    if (f->json) {
      std::cout << Redact(PlanToJson(*plan).dump(2)) << "\n";
    } else if (f->markdown) {
      std::cout << RenderPlanMarkdown(*plan);
    } else {
      std::cout << RenderPlanText(*plan, {.color = UseColor(global, STDOUT_FILENO)});
      if (!f->out.empty()) std::cout << "Saved the plan to " << f->out << "; apply it with: cairn apply " << f->out << "\n";
    }
    if (f->detailed && plan->has_changes()) return 2;
    return 0;
  };
}

}  // namespace

CAIRN_COMMAND("plan", "Show what apply would change", 20, SetupPlan);

}  // namespace cairn::cli
