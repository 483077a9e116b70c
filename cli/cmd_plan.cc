// cairn plan: what apply would change, without changing anything.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "base/discard.h"
#include "base/duration.h"
#include "base/env.h"
#include "base/redact.h"
#include "base/value.h"
#include "cli/engine_session.h"
#include "cli/policy_flags.h"
#include "cli/saved_plan_file.h"
#include "cli/target_flags.h"
#include "engine/operations/import.h"
#include "engine/operations/operations.h"
#include "engine/operations/saved_plan.h"
#include "engine/report/plan_html.h"
#include "engine/report/plan_report.h"
#include "engine/state/state_lock.h"

namespace cairn::cli {

namespace {

// What `path` holds, as --out sees it: "" when a plan may replace it
// without --force (it is missing or empty, or a Cairn plan: a JSON object
// with "format_version" and "changes"), else what it is instead.
std::string PlanFileVerdict(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return "";
  constexpr size_t kLimit = size_t{256} << 20;
  auto text = PosixEnv().ReadFile(path, kLimit);
  if (text.ok() && text->empty()) return "";
  if (text.ok()) {
    // Only the top level's keys matter: a plan's changes are parsed, not
    // kept (at 100,000 of them, they would be a Value of a GB).
    auto json = ParseJson(*text, kMaxValueDepth, /*keep_depth=*/2);
    if (json.ok() && json->is_object() && json->contains("format_version") &&
        (json->contains("changes") || json->contains("encrypted")))
      return "";
  }
  return text.ok() ? "not a Cairn plan" : text.status().message() + ", not a Cairn plan";
}

// PlanFileVerdict of --out, worked out on a thread of its own while the
// stack loads (reading and checking a saved plan of 100,000 changes takes a
// second); not needed with --force, nor without --out.
std::future<std::string> PlanFileVerdictAhead(const std::string& out, bool force) {
  return std::async(out.empty() || force ? std::launch::deferred : std::launch::async,
                    [out] { return PlanFileVerdict(out); });
}

// Why `path` must not be replaced by the plan written there, or "" when it
// may be. A manifest or variable file of the stack never is, even with
// --force: the stack would no longer load. Otherwise, with `plan_only`
// (--out), only what `verdict` (PlanFileVerdict) finds replaceable is
// replaced without --force: a typo in --out must not cost a file.
std::string RefuseOverwrite(const std::string& path, const EngineSession& session,
                            const StackFlags& stack, bool plan_only, bool force,
                            std::future<std::string>& verdict) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return "";
  std::vector<std::string> own = session.config().files;
  own.insert(own.end(), stack.var_files.begin(), stack.var_files.end());
  for (const std::string& file : own) {
    if (fs::equivalent(path, file, ec))
      return path + " is " + (file == path ? "" : file + ", ") +
             "a file of the stack: not overwritten" + (plan_only ? " (even with --force)" : "") +
             "; save the plan elsewhere";
  }
  if (!plan_only || force) return "";
  const std::string what = verdict.get();
  if (what.empty()) return "";
  return path + " exists and is " + what +
         ": not overwritten; pass --force to replace it, or save the plan elsewhere";
}

// Returns `use(copy)`, where `copy` is a copy of `plan` holding `plan`'s
// changes for the call, moved there and back rather than copied: they are
// most of a large plan, and the outputs that differ from the plan (the
// saved plan's variables, --json's hidden sensitive outputs) leave them as
// they are. `use` must not change them.
template <typename Use>
auto WithPlanCopy(Plan& plan, Use use) {
  std::vector<PlannedChange> changes = std::exchange(plan.changes, {});
  Plan copy = plan;
  copy.changes = std::move(changes);
  auto result = use(copy);
  plan.changes = std::move(copy.changes);
  return result;
}

// plan --generate-config: writes to `path` the manifests of the import
// documents whose resource no manifest declares, from the objects as read,
// and loads the stack again with them (the file taken back if it no longer
// loads); `wrote` says so. False after printing why.
bool GenerateConfig(EngineSession& session, const StackFlags& stack, const std::string& path,
                    std::string& wrote) {
  auto state = session.LoadState();
  if (!state) return false;
  const StackConfig& config = session.config();
  if (std::none_of(config.imports.begin(), config.imports.end(),
                   [](const ImportConfig& ic) { return !ic.declared; })) {
    std::cerr << "note: every resource the import documents name is declared already: " << path
              << " was not written\n";
    return true;
  }
  ImportReads reads = ReadImports(config, *state, session.provider(), session.kinds());
  if (!reads.ok()) {
    session.PrintDiagnostics(reads.diagnostics);
    std::cerr << "error: " << path << " was not written\n";
    return false;
  }
  std::string why;
  std::string text = GenerateImportConfig(config, reads, *state, *session.load().registry,
                                          session.kinds(), config.SensitiveStrings(), why);
  if (!why.empty()) {
    std::cerr << "error: " << why << ": " << path << " was not written\n";
    return false;
  }
  if (text.empty()) {
    // Every undeclared one is tracked already: the state adopted it.
    std::cerr << "note: the objects the import documents name are in the state already: " << path
              << " was not written\n";
    return true;
  }
  LoadOptions reload;
  std::string error;
  if (!ToLoadOptions(stack, reload, error)) {
    std::cerr << "error: " << error << "\n";
    return false;
  }
  reload.registry = session.load().registry;
  int documents = 0;
  for (const ImportConfig& ic : config.imports) documents += ic.declared ? 0 : 1;
  ReloadedStack now = WriteAndReload(PosixEnv(), path, text, std::move(reload));
  // Printed with the sources of the stack as it now is (the file written).
  const bool ok = now.ok();
  session.ReplaceStack(std::move(now.load));
  if (!session.load().diagnostics.empty()) session.PrintDiagnostics(session.load().diagnostics);
  if (!ok) {
    std::cerr << "error: " << now.error << "\n";
    return false;
  }
  wrote = "Wrote " + std::to_string(documents) + " manifest" + (documents == 1 ? "" : "s") +
          " to " + path + " from the live objects: review it, and keep it with the stack.\n";
  return true;
}

std::function<int()> SetupPlan(CLI::App& sub, const GlobalOptions& global) {
  struct Flags {
    StackFlags stack;
    bool json = false, markdown = false, detailed = false, refresh = true, destroy = false;
    std::string out, html, generate_config;
    TargetFlags target;
    std::vector<std::string> replace;
    bool lock = true, force = false;
    std::string lock_timeout = "0s";
    PolicyFlags policy;
  };
  auto f = std::make_shared<Flags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json,
               "Print the plan as JSON (docs/plan-format.md); with errors, the diagnostics as "
               "JSON (as 'cairn validate --json')");
  sub.add_flag("--markdown", f->markdown,
               "Print the plan as Markdown (for pull request comments; not with --json)");
  sub.add_option("--out", f->out,
                 "Save the plan to FILE for 'cairn apply FILE [DIR]' (mode 0600; an existing FILE "
                 "is replaced only if it is empty or a Cairn plan, unless --force; refused while "
                 "an interrupted apply has operations to complete: run 'cairn apply' first)")
      ->type_name("FILE");
  sub.add_flag("--force", f->force,
               "Let --out replace a file that is not a Cairn plan (never a manifest or "
               "variable file of the stack)");
  sub.add_option("--html", f->html,
                 "Also write the plan as a self-contained HTML page to FILE (for reviews and CI "
                 "artifacts: summary, attribute diffs, the dependency graph; nothing fetched)")
      ->type_name("FILE");
  sub.add_option("--generate-config", f->generate_config,
                 "Write to FILE (a new file; a bare name goes in the stack directory) the "
                 "manifests of the resources that 'kind: import' documents import but no "
                 "manifest declares, from the live objects, then plan with them: a pure import")
      ->type_name("FILE");
  sub.add_flag("--detailed-exitcode", f->detailed,
               "Exit 0 with no changes, 2 with changes, 1 on error");
  sub.add_option("--refresh", f->refresh,
                 "Read live resources first (default true; --refresh=false uses the state)")
      ->default_val(true);
  AddTargetFlags(sub, f->target,
                 "Plan only ADDRESS (KIND.NAME: all its instances; module.NAME: all in a "
                 "module; objects it left deposed included) and what it needs: its "
                 "dependencies when created or updated, its dependents when deleted or with "
                 "--destroy.");
  sub.add_option("--replace", f->replace,
                 "Replace ADDRESS (KIND.NAME: all its instances; module.NAME: all in a module) "
                 "whatever its fields say, e.g. to "
                 "lower a volume's size (repeatable)")
      ->type_name("ADDRESS")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_flag("--destroy", f->destroy, "Plan the destruction of everything in the state");
  AddPolicyFlags(sub, f->policy);
  sub.add_option("--lock", f->lock,
                 "Wait for a running apply to finish before reading the state (default true; "
                 "--lock=false reads it as it is, with a warning)")
      ->default_val(true);
  sub.add_option("--lock-timeout", f->lock_timeout,
                 "How long to wait for a running apply (default 0: fail at once): " +
                     std::string(kDurationSyntax))
      ->type_name("DURATION");
  sub.footer(
      "Reads CAIRN_ENDPOINT and CAIRN_TOKEN (or the provider document's settings). After an\n"
      "interrupted apply, the plan lists its unfinished operations first: 'cairn apply'\n"
      "completes them before anything else, then plans again.\n\n"
      "Examples:\n"
      "  cairn plan examples/quickstart\n"
      "  cairn plan --out web.plan --detailed-exitcode   # in CI: 2 means changes\n"
      "  cairn plan --json | jq .summary\n"
      "  cairn plan --html plan.html                     # open it in a browser\n"
      "  cairn plan --generate-config imported.yaml      # write what import documents adopt\n"
      "  cairn plan --policy policies/ --sarif policy.sarif   # policy as code in CI");
  return [f, &global]() {
    if (f->json && f->markdown) {
      std::cerr << "error: --json and --markdown cannot be used together: choose one\n";
      return 1;
    }
    // With --json, a plan that cannot be made still answers on stdout: its
    // diagnostics, as `cairn validate --json` gives them.
    std::optional<DiagnosticCollector> collected;
    if (f->json) collected.emplace();
    auto failed = [&]() {
      if (collected) {
        Value out = {{"format_version", Plan::kFormatVersion},
                     {"ok", false},
                     {"diagnostics", Value::parse(DiagnosticsToJson(collected->diagnostics()))}};
        std::cout << Redact(out.dump(2, ' ', false, Value::error_handler_t::replace)) << "\n";
      }
      return 1;
    };
    auto lock_wait = ParseDuration(f->lock_timeout);
    if (!lock_wait.ok()) {
      std::cerr << "error: --lock-timeout: " << lock_wait.status().message() << "\n";
      return failed();
    }
    TargetFlags target = f->target;
    if (!ReadTargetFiles(target)) return failed();
    const bool generating = !f->generate_config.empty();
    if (generating && f->destroy) {
      std::cerr << "error: --generate-config writes manifests for import documents, which a "
                   "destroy plan ignores: drop one of the two\n";
      return failed();
    }
    // A plan reads: a stack never applied stays without a state.
    // The stack is left to the process's end (base/discard.h), unless the
    // session is opened again below, which would keep two.
    const SessionOptions opening = {.needs_api = f->refresh,
                                    .create_state = false,
                                    .allow_undeclared_imports = generating,
                                    .discard_at_exit = f->refresh,
                                    .reads_only = true,
                                    .read_ahead = f->refresh,
                                    .refresh_ahead = f->refresh};
    std::future<std::string> out_verdict = PlanFileVerdictAhead(f->out, f->force);
    auto session = EngineSession::Open(f->stack, global, opening);
    if (!session) return failed();
    if (!f->refresh && !f->destroy &&
        (!session->config().data.empty() || !session->config().imports.empty())) {
      // Data sources and imports are read from the API even without a
      // refresh.
      SessionOptions with_api = opening;
      with_api.needs_api = true;
      with_api.discard_at_exit = true;
      session = EngineSession::Open(f->stack, global, with_api);
      if (!session) return failed();
    }
    const std::string generate_path =
        generating ? GeneratedManifestPath(session->stack_root(), f->generate_config) : "";
    if (generating && PosixEnv().Exists(generate_path)) {
      std::cerr << "error: " << generate_path
                << " exists; --generate-config writes a new file (move it away, or name another)\n";
      return failed();
    }
    // Checked before any work, so that a refused --out costs nothing.
    for (const auto& [path, plan_only] : {std::pair{f->out, true}, std::pair{f->html, false}}) {
      if (path.empty()) continue;
      if (std::string why =
              RefuseOverwrite(path, *session, f->stack, plan_only, f->force, out_verdict);
          !why.empty()) {
        std::cerr << "error: " << why << "\n";
        return failed();
      }
    }
    // An apply holding the lock is changing the state: a plan made now would
    // be of a state about to move, and its unfinished operations are not an
    // interrupted apply's. Wait for it (a lock whose holder is gone is no
    // apply), or read anyway with --lock=false.
    auto running = session->WaitWhileLocked(f->lock ? *lock_wait : std::chrono::milliseconds(0));
    if (!running.ok()) {
      std::cerr << "error: " << Redact(running.status().message()) << "\n";
      return failed();
    }
    if (running->has_value() && f->lock) {
      std::cerr << "error: an apply is changing the state: "
                << Redact(LockConflict(**running).message())
                << ". Plan when it has finished, wait with --lock-timeout 5m, or read the state as "
                   "it is now with --lock=false\n";
      return failed();
    }
    if (running->has_value()) {
      std::cerr << "warning: " << Redact((*running)->holder) << " is running "
                << (*running)->operation
                << " on this state: this plan reads the state as it is now, and may be stale "
                   "when it finishes\n";
    }
    // The operations an interrupted apply left unfinished come first, and
    // the plan shows them (those of a running apply are its own business).
    // A stack never applied has no state, and no journal.
    std::vector<JournalEntry> interrupted;
    if (!running->has_value() && session->has_state()) {
      auto pending = session->store().PendingJournal();
      if (!pending.ok()) {
        std::cerr << "error: cannot read the state's journal: "
                  << Redact(pending.status().message()) << "\n";
        return failed();
      }
      interrupted = std::move(*pending);
    }
    // Policies load before any work: one that does not load fails the plan.
    auto policies = LoadPolicyFlags(f->policy, global);
    if (!policies) return failed();
    if (Status st = CheckPlanCanBeSaved(interrupted); !f->out.empty() && !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return failed();
    }
    std::string wrote;  // what --generate-config wrote
    if (generating && !GenerateConfig(*session, f->stack, generate_path, wrote)) return failed();
    // Said before the plan; on stdout unless that is JSON.
    (f->json ? std::cerr : std::cout) << wrote;
    auto plan = session->PlanStack({.refresh = f->refresh,
                                    .destroy = f->destroy,
                                    .targets = target.targets,
                                    .excludes = target.excludes,
                                    .replace = f->replace,
                                    .pending = std::move(interrupted)},
                                   {});
    if (!plan) return failed();
    const std::vector<PolicyResult> policy_results =
        EvaluatePolicies(policies->policies, *plan, &session->config());
    const bool violated = MandatoryViolated(policy_results);
    if (!WritePolicyReports(f->policy, *policies, policy_results)) return failed();
    if (violated && !f->out.empty()) {
      std::cerr << "error: a mandatory policy failed (below): the plan was not saved to " << f->out
                << "\n";
    }
    if (!f->out.empty() && !violated) {
      // With the variables, which the other outputs leave out.
      Status st = WithPlanCopy(*plan, [&](Plan& saved) {
        Status prepared =
            PrepareSavedPlan(saved, session->config(), f->stack.recursive, {}, PosixEnv());
        if (!prepared.ok()) return prepared;
        Result<std::string> text = SavedPlanFileText(
            PlanToJsonText(saved), session->config().backend.encryption, session->stack_root());
        if (!text.ok()) return text.status();
        return PosixEnv().WriteFileAtomically(f->out, *text);
      });
      if (!st.ok()) {
        std::cerr << "error: " << st.message() << "\n";
        return failed();
      }
    }
    if (!f->html.empty()) {
      if (Status st =
              PosixEnv().WriteFileAtomically(f->html, RenderPlanHtml(*plan, policy_results));
          !st.ok()) {
        std::cerr << "error: " << st.message() << "\n";
        return failed();
      }
    }
    if (f->json) {
      // For reading: a sensitive output's value is not shown (a saved plan,
      // which apply reads, keeps it).
      Value members = Value::object();
      if (!policies->policies.empty()) {
        members["policy_results"] = PolicyResultsToJson(policy_results);
      }
      std::string text = WithPlanCopy(*plan, [&](Plan& shown) {
        PrepareForReading(shown);
        return PlanToJsonText(shown, members);
      });
      std::cout << Redact(text) << "\n";
    } else if (f->markdown) {
      std::cout << RenderPlanMarkdown(*plan);
      if (!policy_results.empty())
        std::cout << "\n```\n" << RenderPolicyText(policy_results) << "```\n";
    } else {
      std::cout << RenderPlanText(*plan, {.color = UseColor(global, STDOUT_FILENO)});
      if (!policy_results.empty()) std::cout << "\n" << Redact(RenderPolicyText(policy_results));
      if (!f->out.empty() && !violated)
        std::cout << "Saved the plan to " << f->out << "; apply it with: cairn apply " << f->out
                  << "\n";
    }
    const int code = violated ? 1 : (f->detailed && plan->has_changes() ? 2 : 0);
    DiscardAtExit(std::move(plan));
    return code;
  };
}

}  // namespace

CAIRN_COMMAND("plan", "Show what apply would change", 20, SetupPlan);

}  // namespace cairn::cli
