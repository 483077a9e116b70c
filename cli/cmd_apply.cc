// cairn apply and cairn destroy: make the API match the manifests (or remove
// everything), exactly once, recording every step in the state.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/duration.h"
#include "base/redact.h"
#include "cli/apply_output.h"
#include "cli/confirm.h"
#include "cli/engine_session.h"
#include "cli/flag_checks.h"
#include "cli/interrupt_watcher.h"
#include "cli/policy_flags.h"
#include "cli/saved_plan_file.h"
#include "cli/target_flags.h"
#include "engine/operations/operations.h"
#include "engine/operations/saved_plan.h"
#include "engine/report/drift_report.h"
#include "engine/report/plan_report.h"

namespace cairn::cli {

namespace {

struct ApplyFlags {
  StackFlags stack;
  bool auto_approve = false;
  bool refresh = true;
  int parallelism = 0;
  std::string lock_timeout = "0s";
  TargetFlags target;
  std::vector<std::string> replace;
  int max_pending = 0;
  bool json = false;
  bool refresh_only = false;
  PolicyFlags policy;
};

// apply --refresh-only: the live values recorded in the state, once
// approved, in one commit; nothing is sent to the API but reads.
int RunRefreshOnly(const ApplyFlags& f, const GlobalOptions& global) {
  InterruptWatcher interrupts;
  const bool color = UseColor(global, STDOUT_FILENO);
  if (f.target.any() || !f.replace.empty() || !f.refresh) {
    std::cerr << "error: --refresh-only records the live values of every resource in the state: "
                 "it takes no --target, --exclude, --replace or --refresh=false\n";
    return 1;
  }
  if (f.stack.paths.size() == 1) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(f.stack.paths[0], ec)) {
      std::cerr << "error: --refresh-only reads the live resources now: it does not apply a saved "
                   "plan (give the stack directory)\n";
      return 1;
    }
  }
  auto lock_wait = ParseDuration(f.lock_timeout);
  if (!lock_wait.ok()) {
    std::cerr << "error: --lock-timeout: " << lock_wait.status().message() << "\n";
    return 1;
  }
  auto session = EngineSession::Open(f.stack, global, {.create_state = false});
  if (!session) return 1;
  if (!session->has_state()) {
    std::cout << "No changes. The stack has no state yet: nothing to refresh.\n";
    return 0;
  }
  auto lock = session->Lock("apply --refresh-only", *lock_wait);
  if (!lock) return 1;
  HeldStateLock held(*session, *lock);
  // Recovering an interrupted apply sends requests; recording live values
  // beside operations whose outcome is unknown would record half of them.
  auto pending = session->store().PendingJournal();
  if (!pending.ok()) {
    std::cerr << "error: cannot read the state journal: " << Redact(pending.status().message())
              << "\n";
    return 1;
  }
  if (!pending->empty()) {
    std::cerr << "error: " << pending->size()
              << " operation(s) of an interrupted apply are unfinished: run 'cairn apply' "
                 "(without --refresh-only) to complete them first; nothing was recorded\n";
    return 1;
  }
  auto state = session->LoadState();
  if (!state) return 1;
  RefreshOnlyPlan plan =
      PlanRefreshOnly(*state, session->provider(), session->kinds(), interrupts.token());
  if (!plan.diagnostics.empty()) session->PrintDiagnostics(plan.diagnostics);
  if (!plan.ok()) return 1;
  if (!f.json) std::cout << RenderRefreshOnlyText(plan.report, plan.commit, color);
  auto summary = [&](bool ok, size_t recorded, size_t removed) {
    if (f.json) {
      Value j = {{"event", "summary"},
                 {"ok", ok},
                 {"refresh_only", true},
                 {"recorded", recorded},
                 {"removed", removed}};
      std::cout << j.dump() << std::endl;
    }
  };
  if (!plan.has_changes()) {
    summary(true, 0, 0);
    return 0;
  }
  if (!f.auto_approve) {
    if (f.json) {
      std::cerr << "error: --json prints events, not a plan to confirm: pass --auto-approve\n";
      return 1;
    }
    if (!Confirm("Do you want to record these live values in the state?", interrupts.token())) {
      return 1;
    }
  }
  if (interrupts.token().stop_requested()) {
    std::cout << "Interrupted before anything was recorded.\n";
    return 1;
  }
  if (auto c = session->store().Commit(plan.commit); !c.ok()) {
    std::cerr << "error: could not record the live values in the state: "
              << Redact(c.status().message()) << "\n";
    summary(false, 0, 0);
    return 1;
  }
  summary(true, plan.commit.put.size(), plan.commit.remove.size());
  if (!f.json) {
    std::cout << "\n"
              << (color ? "\033[1;32m" : "") << "Refresh complete!" << (color ? "\033[0m" : "")
              << " Recorded the live values of " << plan.commit.put.size() << " resource"
              << (plan.commit.put.size() == 1 ? "" : "s") << "; removed "
              << plan.commit.remove.size() << " deleted outside Cairn from the state.\n";
  }
  return 0;
}

int RunApply(const ApplyFlags& f, const GlobalOptions& global, bool destroy) {
  if (f.refresh_only) return RunRefreshOnly(f, global);
  InterruptWatcher interrupts;  // first: every thread started later inherits the signal mask
  bool color = UseColor(global, STDOUT_FILENO);

  std::optional<Plan> saved;
  SessionOptions so;
  SavedPlanStack saved_stack;
  if (!destroy && !f.stack.paths.empty()) {
    std::string error;
    saved = ReadSavedPlan(f.stack.paths[0], error);
    if (!error.empty()) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    if (!saved && f.stack.paths.size() == 2) {
      std::cerr << "error: " << f.stack.paths[0]
                << " is a stack directory, and apply takes one: a second argument is the "
                   "directory a saved plan applies in ('cairn apply PLAN DIR')\n";
      return 1;
    }
    if (saved) {
      if (f.target.any() || !f.replace.empty()) {
        std::cerr << "error: --target, --exclude and --replace shape a plan: a saved plan is "
                     "applied exactly as planned (give them to `cairn plan --out`)\n";
        return 1;
      }
      // Only the ephemeral variables are given again: the plan keeps
      // every other value, and no ephemeral one.
      for (const std::string& assignment : f.stack.vars) {
        const std::string name = assignment.substr(0, assignment.find('='));
        if (std::find(saved->ephemeral_variables.begin(), saved->ephemeral_variables.end(), name) ==
            saved->ephemeral_variables.end()) {
          std::cerr << "error: --var " << name
                    << " cannot be given with a saved plan: it is applied exactly as planned, "
                       "with the variable values it was made with (only ephemeral variables, "
                       "which it does not keep, are given again)\n";
          return 1;
        }
      }
      if (!f.stack.var_files.empty() && saved->ephemeral_variables.empty()) {
        std::cerr << "error: --var-file cannot be given with a saved plan: it is applied "
                     "exactly as planned, with the variable values it was made with\n";
        return 1;
      }
      // Wherever the same stack is: DIR, else the current directory, else
      // the directory it was made in (engine/operations/saved_plan.h).
      LoadOptions lo;
      if (!ToLoadOptions(f.stack, lo, error)) {
        std::cerr << "error: " << error << "\n";
        return 1;
      }
      std::optional<std::string> dir;
      if (f.stack.paths.size() == 2) dir = f.stack.paths[1];
      saved_stack = LoadSavedPlanStack(*saved, dir, std::move(lo));
      if (!saved_stack.ok()) {
        if (!saved_stack.load.diagnostics.empty()) {
          std::cerr << RenderDiagnostics(saved_stack.load.diagnostics, saved_stack.load.sources,
                                         {.color = UseColor(global, STDERR_FILENO)});
        }
        std::cerr << "error: " << f.stack.paths[0] << ": " << saved_stack.error << "\n";
        return 1;
      }
      so.stack_dir = saved_stack.dir;
      so.plan_vars = saved->variables;
      so.preloaded = &saved_stack.load;
    }
  }
  auto lock_wait = ParseDuration(f.lock_timeout);
  if (!lock_wait.ok()) {
    std::cerr << "error: --lock-timeout: " << lock_wait.status().message() << "\n";
    return 1;
  }
  TargetFlags target = f.target;
  if (!ReadTargetFiles(target)) return 1;
  // A saved plan is checked again with the policies given now.
  auto policies = LoadPolicyFlags(f.policy, global);
  if (!policies) return 1;
  auto session = EngineSession::Open(f.stack, global, so);
  if (!session) return 1;
  auto lock = session->Lock(destroy ? "destroy" : "apply", *lock_wait);
  if (!lock) return 1;
  HeldStateLock held(*session, *lock);

  ApplyOptions options = session->apply_options(f.parallelism);
  options.policies = policies->policies;
  if (f.max_pending > 0) options.max_pending = f.max_pending;
  const auto mode = f.json                       ? ApplyProgress::Mode::kJson
                    : isatty(STDOUT_FILENO) == 1 ? ApplyProgress::Mode::kLive
                                                 : ApplyProgress::Mode::kLines;
  // Until the plan is known (recovery), a line per event.
  auto recovery_progress = std::make_shared<ApplyProgress>(
      mode == ApplyProgress::Mode::kJson ? mode : ApplyProgress::Mode::kLines, color, 0, "");
  options.progress = [recovery_progress](const ProgressEvent& e) { recovery_progress->Handle(e); };
  options.stop = interrupts.token();

  // Operations an interrupted run left in flight are finished first.
  RecoveryResult recovery = RecoverJournal(session->provider(), session->store(), options);
  if (!recovery.ok()) {
    session->PrintDiagnostics(recovery.diagnostics);
    std::cerr << "error: could not complete the interrupted operations above; nothing else "
                 "was attempted\n";
    return 1;
  }

  Plan plan;
  if (saved) {
    // Its workspace, not whichever is selected now (Terraform refuses the
    // same way): a plan of dev applied to prod would create dev's objects
    // there.
    if (saved->workspace != session->workspace()) {
      std::cerr << "error: the saved plan was made for workspace \"" << saved->workspace
                << "\", and this apply would use workspace \"" << session->workspace()
                << "\": apply it with --workspace " << saved->workspace << "\n";
      return 1;
    }
    auto state = session->LoadState();
    if (!state) return 1;
    if (Status st = CheckPlanIsCurrent(*saved, *state); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
    if (Status st = FillWriteOnly(*saved, session->config()); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
    plan = std::move(*saved);
  } else {
    auto built = session->PlanStack({.refresh = f.refresh,
                                     .destroy = destroy,
                                     .targets = target.targets,
                                     .excludes = target.excludes,
                                     .replace = f.replace},
                                    interrupts.token());
    if (!built) return 1;
    plan = std::move(*built);
    if (!f.json) std::cout << RenderPlanText(plan, {.color = color});
  }
  const std::vector<PolicyResult> policy_results =
      EvaluatePolicies(policies->policies, plan, &session->config());
  if (!WritePolicyReports(f.policy, *policies, policy_results)) return 1;
  if (!policy_results.empty())
    (f.json ? std::cerr : std::cout) << Redact(RenderPolicyText(policy_results));
  if (MandatoryViolated(policy_results)) {
    std::cerr << "error: a mandatory policy failed: nothing was applied\n";
    return 1;
  }
  if (!saved) {
    if (plan.has_changes() && !f.auto_approve && f.json) {
      std::cerr << "error: --json prints events, not a plan to confirm: pass "
                   "--auto-approve, or apply a plan saved with 'cairn plan --out'\n";
      return 1;
    }
    if (plan.has_changes() && !f.auto_approve) {
      if (!Confirm(destroy ? "Do you really want to destroy these resources?"
                           : "Do you want to perform these actions?",
                   interrupts.token())) {
        return 1;
      }
    }
    if (plan.has_changes() && !f.json) std::cout << "\n";
  }
  if (interrupts.token().stop_requested()) {
    std::cout << "Interrupted before any change was made.\n";
    return 1;
  }
  auto progress = std::make_shared<ApplyProgress>(mode, color, PlannedOperations(plan),
                                                  ProgressVerb(plan, destroy));
  options.progress = [progress](const ProgressEvent& e) { progress->Handle(e); };
  ApplyResult result = Apply(plan, session->provider(), session->store(), options);
  result.summary.AddRecovered(recovery.summary);
  progress->Finish();
  return ReportApply(result, destroy, *session, color, f.json);
}

void AddApplyFlags(CLI::App& sub, ApplyFlags& f, bool destroy) {
  sub.add_flag("--auto-approve", f.auto_approve, "Skip the confirmation prompt");
  sub.add_option("--parallelism", f.parallelism,
                 "Requests in flight at once, 1 to 256 (default: provider document, else 32); a "
                 "resource waiting to be ready holds none")
      ->type_name("N")
      ->check(WholeNumberIn(1, 256));
  sub.add_option("--refresh", f.refresh, "Read live resources before planning (default true)")
      ->default_val(true);
  sub.add_option("--lock-timeout", f.lock_timeout,
                 "Wait this long for the state lock (default 0: fail at once): " +
                     std::string(kDurationSyntax))
      ->type_name("DURATION");
  sub.add_option("--max-pending", f.max_pending,
                 "Operations waiting at once for their resource to be ready or gone, 1 to "
                 "1000000 (default 100000); they hold none of the --parallelism requests in flight")
      ->type_name("N")
      ->check(WholeNumberIn(1, 1000000));
  sub.add_flag("--json", f.json,
               "Print progress as one JSON object per event, then a summary object (needs "
               "--auto-approve or a saved plan)");
  AddTargetFlags(sub, f.target,
                 destroy ? "Destroy only ADDRESS (KIND.NAME: all its instances; module.NAME: "
                           "all in a module) and everything that depends on it, dependents "
                           "first."
                         : "Only ADDRESS (KIND.NAME: all its instances; module.NAME: all in a "
                           "module) and what it needs: its dependencies when created or "
                           "updated, its dependents when deleted.");
  AddPolicyFlags(sub, f.policy);
}

std::function<int()> SetupApply(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<ApplyFlags>();
  sub.add_option("DIR_OR_PLAN", f->stack.paths,
                 "Stack directory (default: .), or a plan saved with 'cairn plan --out' and the "
                 "directory of its stack (default: the current directory if it holds that "
                 "stack, else the one it was made in)")
      ->expected(0, 2);
  sub.add_flag("-r,--recursive", f->stack.recursive, "Also read manifests in subdirectories");
  sub.add_option("--var", f->stack.vars, "Set a variable: NAME=VALUE (repeatable)")
      ->type_name("NAME=VALUE");
  sub.add_option("--var-file", f->stack.var_files, "Read variable values from a YAML file")
      ->type_name("FILE");
  AddWorkspaceFlag(sub, f->stack);
  AddApplyFlags(sub, *f, /*destroy=*/false);
  sub.add_flag("--refresh-only", f->refresh_only,
               "Only record in the state the live values of what changed outside Cairn (and "
               "forget what was deleted outside it), after showing them; nothing is sent to the "
               "API but reads");
  sub.add_option("--replace", f->replace,
                 "Replace ADDRESS (KIND.NAME: all its instances; module.NAME: all in a module) "
                 "whatever its fields say, e.g. to "
                 "lower a volume's size (repeatable)")
      ->type_name("ADDRESS")
      ->expected(1)
      ->allow_extra_args(false);
  sub.footer(
      "Without a saved plan, shows the plan and asks for confirmation (with no terminal, it "
      "refuses\n"
      "unless --auto-approve). A saved plan is applied exactly, with the variable values it was\n"
      "made with (so --var is refused), and refused if the state has moved. It applies to the\n"
      "stack it was made for wherever that is checked out: in DIR, else in the current\n"
      "directory, else where it was made; a directory whose manifests or backend differ from\n"
      "the ones planned is refused, naming the files that differ.\n"
      "Interrupted (Ctrl-C, or even kill -9), the next apply finishes the job with no "
      "duplicate.\n"
      "With --refresh-only, it changes nothing in the API: it shows what differs between the\n"
      "state and the live resources (as 'cairn drift' does, ignored fields included) and, once\n"
      "approved, records the live values in the state; outputs change with the next apply.\n\n"
      "Examples:\n"
      "  cairn apply examples/quickstart --auto-approve\n"
      "  cairn plan --out web.plan && cairn apply web.plan\n"
      "  cairn plan --out ../ci.plan        # in CI, then in another checkout of the stack:\n"
      "  cairn apply ../ci.plan             # or: cairn apply ci.plan path/to/checkout\n"
      "  cairn apply --refresh-only         # accept changes made outside Cairn");
  return [f, &global] { return RunApply(*f, global, /*destroy=*/false); };
}

std::function<int()> SetupDestroy(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<ApplyFlags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  AddApplyFlags(sub, *f, /*destroy=*/true);
  sub.footer(
      "Deletes everything the state tracks, dependents first; refuses resources with\n"
      "lifecycle.prevent_destroy. With --target, only the targets and what depends on them\n"
      "(never what they depend on); an address that names nothing is an error. A targeted\n"
      "destroy keeps the outputs whose values still resolve and removes those that refer to\n"
      "what it deletes; a whole destroy removes them all.\n\n"
      "Examples:\n  cairn destroy examples/quickstart --auto-approve\n"
      "  cairn destroy examples/web --target 'volume.data[\"db\"]'   # the volume only");
  return [f, &global] { return RunApply(*f, global, /*destroy=*/true); };
}

}  // namespace

CAIRN_COMMAND("apply", "Make the API match the manifests", 30, SetupApply);
CAIRN_COMMAND("destroy", "Delete everything the stack manages", 40, SetupDestroy);

}  // namespace cairn::cli
