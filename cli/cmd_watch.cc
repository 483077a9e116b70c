// cairn watch: drift and checks of several stacks, continuously.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "base/duration.h"
#include "base/redact.h"
#include "cli/engine_session.h"
#include "cli/flag_checks.h"
#include "cli/policy_flags.h"
#include "cli/watch_http.h"
#include "engine/report/watch_page.h"
#include "engine/state/state_lock.h"
#include "engine/watch/shared_listings.h"
#include "engine/watch/watch_metrics.h"
#include "engine/watch/watch_run.h"
#include "engine/watch/watcher.h"
#include "providers/infra/curl_transport.h"
#include "providers/webhook.h"

namespace cairn::cli {
namespace {

struct WatchFlags {
  std::vector<std::string> dirs;
  std::string workspace;
  std::string interval = "5m";
  std::string listen;
  std::string webhook;
  bool remediate = false;
  std::vector<std::string> policy_dirs;
  bool unmanaged = false;
  std::vector<std::string> name_prefixes;
  int threads = 4;
  int parallelism = 10;
  bool once = false;
};

// What every stack's runs share.
struct WatchShared {
  const GlobalOptions* global = nullptr;
  std::string holder;  // this watcher, as the leases name it
  PolicySet policies;
  bool unmanaged = false;
  std::vector<std::string> name_prefixes;
  int parallelism = 10;
};

// Stderr lines are the operator's log; stdout carries the events alone.
void WatchLog(const std::string& line) { std::cerr << Redact(line) << "\n"; }

// The listings of one API (one project), shared by every stack that talks
// to it (engine/watch/shared_listings.h), read by a session of their own.
struct ListingGroup {
  explicit ListingGroup(std::unique_ptr<EngineSession> s)
      : lister(std::move(s)), listings(lister->provider()) {}
  std::unique_ptr<EngineSession> lister;
  SharedListings listings;
};

// One stack, loaded, with its state and the API.
class StackWatchTarget final : public WatchTarget {
 public:
  StackWatchTarget(std::unique_ptr<EngineSession> session, const WatchShared& shared,
                   bool remediate, std::string name, std::shared_ptr<ListingGroup> listings,
                   std::chrono::milliseconds interval)
      : session_(std::move(session)),
        shared_(shared),
        remediate_(remediate),
        name_(std::move(name)),
        listings_(std::move(listings)),
        interval_(interval) {}

  Result<bool> Claim(std::string* holder) override {
    // A stack never applied has no state to claim: nothing to race for.
    if (!session_->has_state()) return true;
    return session_->store().TryWatchLease(shared_.holder, holder);
  }

  StackRunRecord Run(std::stop_token stop) override {
    StackRunRecord record;
    record.started_ms = WatchNowMs();
    const int64_t requests_before = session_->requests_made();
    // A listing read in the last half interval (for another stack of the
    // same project, say) serves this run too.
    ListingSharingProvider provider(session_->provider(), listings_->listings, interval_ / 2);
    RunInto(record, provider, stop);
    record.requests =
        static_cast<int>(session_->requests_made() - requests_before + provider.list_requests());
    record.finished_ms = WatchNowMs();
    if (record.failed()) WatchLog("watch: " + name_ + ": run failed: " + record.error);
    return record;
  }

 private:
  void RunInto(StackRunRecord& record, Provider& provider, std::stop_token stop) {
    StateSnapshot state;
    if (session_->has_state()) {
      Result<StateSnapshot> loaded = session_->store().Load();
      if (!loaded.ok()) {
        record.error = "cannot read the state: " + loaded.status().message();
        return;
      }
      state = std::move(*loaded);
    }
    for (const auto& [addr, rs] : state.resources) {
      record.resources.push_back({addr, rs.kind, rs.id});
    }
    WatchRunOptions options;
    options.stop = stop;
    options.unmanaged = {.enabled = shared_.unmanaged, .name_prefixes = shared_.name_prefixes};
    WatchRun run = RunWatch(session_->config(), state, provider, session_->kinds(), options);
    if (!run.ok()) {
      record.error = run.diagnostics.empty() ? "the run failed" : run.diagnostics.front().summary;
      return;
    }
    record.drift = run.drift;
    record.checks = run.checks;
    if (remediate_ && record.drift.has_drift()) Remediate(run, record, stop);
  }

  void Remediate(const WatchRun& run, StackRunRecord& record, std::stop_token stop) {
    RemediationRecord r;
    r.at_ms = WatchNowMs();
    std::string reason = JudgeRemediation(run);
    // Drift that asks for nothing to be applied (unmanaged resources
    // alone): nothing to decide.
    if (reason.empty() && PlannedUpdates(run.plan) == 0) return;
    if (reason.empty()) {
      for (const PolicyResult& p :
           EvaluatePolicies(shared_.policies.policies, run.plan, &session_->config())) {
        if (p.status != PolicyResult::Status::kPassed &&
            p.enforcement == PolicyConfig::Enforcement::kMandatory) {
          reason = "policy " + p.policy + " does not pass" +
                   (p.address.empty() ? "" : " for " + p.address) +
                   (p.message.empty() ? "" : ": " + p.message);
          break;
        }
      }
    }
    if (reason.empty() && !session_->has_state()) reason = "the stack has no state";
    std::optional<LockInfo> lock;
    if (reason.empty()) {
      Result<LockInfo> taken = session_->store().Lock("watch remediate", {});
      if (!taken.ok()) {
        reason = "the stack's state lock is not free: " + taken.status().message();
      } else {
        lock = *taken;
      }
    }
    if (lock) {
      reason = ApplyRemediation(run, r, stop);
      if (Status st = session_->store().Unlock(lock->id); !st.ok()) {
        WatchLog("watch: " + name_ + ": could not release the state lock " + lock->id + ": " +
                 st.message());
      }
    }
    if (r.result.empty()) {
      r.result = "refused";
      r.reason = reason;
    }
    WatchLog("watch: " + name_ + ": remediation " + r.result +
             (r.reason.empty() ? "" : ": " + r.reason));
    record.remediation = std::move(r);
  }

  // With the lock held: the plan applied if the state has not moved and the
  // journal is empty. Sets r.result to "applied" or "failed"; a refusal's
  // reason is returned instead.
  std::string ApplyRemediation(const WatchRun& run, RemediationRecord& r, std::stop_token stop) {
    Result<std::vector<JournalEntry>> pending = session_->store().PendingJournal();
    if (!pending.ok()) return "cannot read the journal: " + pending.status().message();
    if (!pending->empty()) {
      return "an interrupted apply left operations in the journal: run `cairn apply` to finish "
             "them";
    }
    Result<StateSnapshot> now = session_->store().Load();
    if (!now.ok()) return "cannot read the state: " + now.status().message();
    if (Status st = CheckPlanIsCurrent(run.plan, *now); !st.ok()) {
      return "the state changed since the run (" + st.message() + "): the next run decides";
    }
    ApplyOptions options = session_->apply_options(shared_.parallelism);
    options.policies = shared_.policies.policies;
    options.stop = stop;
    ApplyResult result = Apply(run.plan, session_->provider(), session_->store(), options);
    r.updated = result.summary.updated;
    if (result.ok() && result.summary.failed == 0) {
      r.result = "applied";
    } else {
      r.result = "failed";
      r.reason = !result.diagnostics.empty() ? result.diagnostics.front().summary
                 : result.summary.interrupted
                     ? "interrupted"
                     : std::to_string(result.summary.failed) + " update(s) failed";
    }
    return "";
  }

  std::unique_ptr<EngineSession> session_;
  const WatchShared& shared_;
  const bool remediate_;
  const std::string name_;
  const std::shared_ptr<ListingGroup> listings_;
  const std::chrono::milliseconds interval_;
};

// The stacks of `f.dirs`, loaded: nullopt after printing why one did not
// load. `interval` is the default; a stack's watch document may set its own.
std::optional<std::vector<WatchedStack>> LoadWatchedStacks(const WatchFlags& f,
                                                           const WatchShared& shared,
                                                           std::chrono::milliseconds interval) {
  std::vector<WatchedStack> out;
  std::set<std::string> names, dirs_seen;
  std::map<std::string, std::shared_ptr<ListingGroup>> groups;  // by API identity
  bool ok = true;
  for (const std::string& dir : f.dirs) {
    StackFlags flags;
    flags.paths = {dir};
    flags.workspace = f.workspace;
    auto session = EngineSession::Open(flags, *shared.global, {.create_state = false});
    if (!session) {
      std::cerr << "error: the stack in " << dir << " did not load (above)\n";
      ok = false;
      continue;
    }
    WatchedStack w;
    std::error_code ec;
    std::string abs = std::filesystem::absolute(dir, ec).lexically_normal().string();
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    if (!dirs_seen.insert(abs).second) {
      std::cerr << "error: the stack in " << dir << " is given twice\n";
      ok = false;
      continue;
    }
    std::string name = std::filesystem::path(abs).filename().string();
    if (name.empty() || names.count(name)) name = dir;
    names.insert(name);
    const WatchConfig& wc = session->config().watch;
    w.info = {name, abs, session->workspace()};
    w.interval = wc.interval.value_or(interval);
    w.remediate = wc.remediate_drift.value_or(f.remediate);
    std::shared_ptr<ListingGroup>& group = groups[session->api_identity()];
    if (!group) {
      auto lister =
          EngineSession::Open(flags, *shared.global,
                              {.settings_only = true, .create_state = false, .open_state = false});
      if (!lister) {
        ok = false;
        continue;
      }
      group = std::make_shared<ListingGroup>(std::move(lister));
    }
    w.target = std::make_unique<StackWatchTarget>(std::move(session), shared, w.remediate, name,
                                                  group, w.interval);
    out.push_back(std::move(w));
  }
  if (!ok) return std::nullopt;
  return out;
}

void PrintWatchEvent(const Value& event) {
  std::cout << Redact(event.dump()) << "\n" << std::flush;
}

// --once: every stack run once, in turn; 0 when all are ok, 2 when any has
// drift or a failing check, 1 when any run failed (or was not ours).
int WatchOnce(std::vector<WatchedStack>& stacks) {
  int exit_code = 0;
  for (WatchedStack& s : stacks) {
    std::string holder;
    Result<bool> claim = s.target->Claim(&holder);
    if (!claim.ok() || !*claim) {
      WatchLog("watch: " + s.info.name + ": " +
               (claim.ok() ? "another watcher holds it (" + holder + ")"
                           : "cannot claim it: " + claim.status().message()));
      exit_code = 1;
      continue;
    }
    StackRunRecord run = s.target->Run({});
    for (const Value& e : WatchEvents(s.info, nullptr, nullptr, run)) PrintWatchEvent(e);
    Value status;
    RunRecordToJson(run, nullptr, status);
    WatchLog("watch: " + s.info.name + ": " + status["status"].get<std::string>() + " (" +
             std::to_string(run.requests) + " requests)");
    if (run.failed()) {
      exit_code = 1;
    } else if (exit_code == 0 && StackStatusName(run) != "ok") {
      exit_code = 2;
    }
  }
  return exit_code;
}

int RunWatchCommand(const WatchFlags& f, const GlobalOptions& global) {
  auto interval = ParseDuration(f.interval);
  if (!interval.ok()) {
    std::cerr << "error: --interval: " << interval.status().message() << "\n";
    return 1;
  }
  if (*interval < std::chrono::seconds(1)) {
    std::cerr << "error: --interval must be at least 1s\n";
    return 1;
  }
  if ((!f.name_prefixes.empty()) && !f.unmanaged) {
    std::cerr << "error: --name-prefix applies to --unmanaged\n";
    return 1;
  }
  WatchShared shared;
  shared.global = &global;
  shared.holder = CurrentLockHolder();
  shared.unmanaged = f.unmanaged;
  shared.name_prefixes = f.name_prefixes;
  shared.parallelism = f.parallelism;
  PolicyFlags pf;
  pf.dirs = f.policy_dirs;
  auto policies = LoadPolicyFlags(pf, global);
  if (!policies) return 1;
  shared.policies = std::move(*policies);

  // SIGTERM, SIGINT and SIGHUP are taken by sigwait below: blocked before
  // any thread starts, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto stacks = LoadWatchedStacks(f, shared, *interval);
  if (!stacks) return 1;
  if (f.once) return WatchOnce(*stacks);

  std::unique_ptr<CurlTransport> webhook_transport;
  std::unique_ptr<WebhookSender> webhook;
  if (!f.webhook.empty()) {
    if (f.webhook.rfind("http://", 0) != 0 && f.webhook.rfind("https://", 0) != 0) {
      std::cerr << "error: --webhook must be an http:// or https:// URL\n";
      return 1;
    }
    CurlTransport::Options to;
    to.user_agent = std::string("cairn/") + CAIRN_VERSION;
    if (const char* ca = std::getenv("CAIRN_CA_BUNDLE"); ca && *ca) to.ca_file = ca;
    webhook_transport = std::make_unique<CurlTransport>(std::move(to));
    webhook = std::make_unique<WebhookSender>(*webhook_transport, f.webhook);
    WatchLog("watch: posting events to " + webhook->display_url());
  }
  WatchMetrics metrics;
  WatcherOptions wo;
  wo.threads = f.threads;
  wo.holder = shared.holder;
  wo.remediate = f.remediate;
  wo.on_event = [&webhook](const Value& event) {
    PrintWatchEvent(event);
    if (webhook) webhook->Post(Redact(event.dump()));
  };
  wo.on_run = [&metrics](const WatchedStackInfo& s, const StackRunRecord& r) {
    metrics.RecordRun(s, r);
  };
  wo.on_role = [&metrics](const WatchedStackInfo& s, bool active) {
    metrics.RecordRole(s, active);
    WatchLog("watch: " + s.name + (active ? ": watched here" : ": another watcher holds it"));
  };
  Watcher watcher(std::move(*stacks), wo);

  std::unique_ptr<WatchHttpServer> http;
  if (!f.listen.empty()) {
    auto started = WatchHttpServer::Start(f.listen, [&](const std::string& path) {
      WatchHttpReply reply;
      if (path == "/metrics") {
        WebhookTotals totals;
        if (webhook) {
          const WebhookCounts c = webhook->counts();
          totals = {c.delivered, c.failed_attempts, c.refused, c.dropped, c.queued};
        }
        reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
        reply.body = metrics.Render(webhook ? &totals : nullptr);
      } else if (path == "/status.json") {
        reply.content_type = "application/json";
        reply.body = Redact(watcher.StatusJson().dump(2)) + "\n";
      } else if (path == "/" || path == "/index.html") {
        reply.content_type = "text/html; charset=utf-8";
        reply.body = RenderWatchPage(watcher.StatusJson(), {});  // redacted by it
      } else if (path == "/healthz") {
        reply.body = "ok\n";
      } else {
        reply.status = 404;
        reply.body = "not found: try /, /status.json or /metrics\n";
      }
      return reply;
    });
    if (!started.ok()) {
      std::cerr << "error: " << started.status().message() << "\n";
      return 1;
    }
    http = std::move(*started);
    WatchLog("watch: listening on http://" + http->address() + " (/, /status.json, /metrics)");
  }
  WatchLog("watch: watching " + std::to_string(watcher.stack_count()) + " stack(s) as " +
           shared.holder);
  watcher.Start();
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      WatchLog("watch: SIGHUP: loading the stacks again");
      auto reloaded = LoadWatchedStacks(f, shared, *interval);
      if (!reloaded) {
        WatchLog("watch: a stack did not load (above): still watching the stacks as they were");
        continue;
      }
      watcher.Replace(std::move(*reloaded));
      continue;
    }
    WatchLog("watch: stopping: finishing the runs in flight");
    watcher.Stop();
    if (webhook && !webhook->Drain(std::chrono::seconds(5))) {
      WatchLog("watch: " + std::to_string(webhook->counts().queued) +
               " event(s) not delivered to the webhook");
    }
    return 0;
  }
}

std::function<int()> SetupWatch(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<WatchFlags>();
  sub.add_option("DIR", f->dirs, "Stack directories to watch (default: .)");
  sub.add_option("--workspace", f->workspace, "The workspace of every stack (default: each's)")
      ->type_name("NAME");
  sub.add_option("--interval", f->interval,
                 "Time between two runs of a stack, jittered by 10% (default 5m; a stack's "
                 "`kind: watch` document may set its own): " +
                     std::string(kDurationSyntax))
      ->type_name("DURATION");
  sub.add_option("--listen", f->listen,
                 "Serve the status page (/), the status as JSON (/status.json) and Prometheus "
                 "metrics (/metrics) at HOST:PORT, e.g. 127.0.0.1:9464")
      ->type_name("HOST:PORT");
  sub.add_option("--webhook", f->webhook,
                 "Also POST each event, as JSON, to URL (retried with backoff; never blocks the "
                 "runs)")
      ->type_name("URL");
  sub.add_flag("--remediate", f->remediate,
               "Apply a plan that only puts drifted fields back (no create, replace or delete), "
               "when the policies pass and the state lock is free; a stack's `kind: watch` "
               "document may say remediate: none or drift-only instead");
  sub.add_option("--policy", f->policy_dirs,
                 "Policies a remediation must pass (repeatable; also CAIRN_POLICY_PATH)")
      ->type_name("DIR")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_flag("--unmanaged", f->unmanaged,
               "Also report live resources of the managed kinds that no state tracks");
  sub.add_option("--name-prefix", f->name_prefixes,
                 "With --unmanaged: only resources whose name starts with PREFIX (repeatable)")
      ->type_name("PREFIX")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--threads", f->threads, "Stacks run at once, 1 to 64 (default 4)")
      ->type_name("N")
      ->check(WholeNumberIn(1, 64));
  sub.add_option("--parallelism", f->parallelism,
                 "Requests in flight at once in a remediation, 1 to 256 (default 10)")
      ->type_name("N")
      ->check(WholeNumberIn(1, 256));
  sub.add_flag("--once", f->once,
               "Run every stack once and exit: 0 all ok, 2 drift or a failing check, 1 a run "
               "failed");
  sub.footer(
      "Watches stacks: on each stack's schedule, reads its live resources by list (the stacks\n"
      "of one project share each listing), reports drift as `cairn drift` does, and decides its\n"
      "checks and conditions with the live values. Each change of a stack's status is one JSON\n"
      "line on stdout (drift_detected, drift_resolved, check_failed, check_recovered,\n"
      "run_failed, run_recovered, remediation_applied, remediation_refused,\n"
      "remediation_failed), and is POSTed to --webhook. Several watchers may watch the same\n"
      "stacks: each stack is watched by one of them at a time (PostgreSQL: an advisory lock;\n"
      "SQLite: a lock on a file beside the state), and another takes over within one interval\n"
      "if it dies. SIGTERM finishes the runs in flight and exits; SIGHUP loads the manifests\n"
      "again. See docs/watch.md.\n\n"
      "Examples:\n"
      "  cairn watch stacks/web stacks/db --interval 5m --listen 127.0.0.1:9464\n"
      "  cairn watch stacks/* --webhook https://hooks.example.com/cairn --remediate\n"
      "  cairn watch examples/quickstart --once        # one run, exit 2 on drift");
  return [f, &global]() {
    if (f->dirs.empty()) f->dirs = {"."};
    return RunWatchCommand(*f, global);
  };
}

}  // namespace

CAIRN_COMMAND("watch", "Watch stacks for drift and failing checks, continuously", 54, SetupWatch);

}  // namespace cairn::cli
