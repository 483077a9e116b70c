// EngineSession: the real implementations a stack command works with, wired
// once: the loaded manifests, the kind catalog from schemas/, the state store
// named by the stack's backend document, and (for commands that talk to the
// API) the infra provider over libcurl with the endpoint and token from the
// environment. Problems are printed to stderr as diagnostics.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>

#include "base/env.h"
#include "cli/command.h"
#include "cli/stack_options.h"
#include "engine/apply/apply.h"
#include "engine/manifest/loader.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"
#include "providers/http_transport.h"

namespace cairn::cli {

struct SessionOptions {
  bool needs_api = true;
  // Load the manifests from this directory instead of the flags' paths.
  std::optional<std::string> stack_dir;
  // Variable values of a saved plan (LoadOptions::plan_vars).
  std::map<std::string, Value> plan_vars;
  // The stack, loaded already (a saved plan's, found by LoadSavedPlanStack):
  // moved from, instead of loading one from the flags.
  LoadResult* preloaded = nullptr;
  // The command needs no resources (LoadOptions::settings_only).
  bool settings_only = false;
  // With settings_only: not even the provider settings
  // (LoadOptions::backend_only); implies needs_api = false.
  bool backend_only = false;
  // False for commands that only read the state (plan, drift, state list...):
  // a stack without one opens with no store (has_state() is false), reads
  // as an empty state, and nothing is created.
  bool create_state = true;
  // A directory without manifests opens with an empty stack (import
  // --generate, which writes the first ones).
  bool allow_no_manifests = false;
};

class EngineSession {
 public:
  // nullptr after printing why it could not be opened.
  static std::unique_ptr<EngineSession> Open(const StackFlags& flags, const GlobalOptions& global,
                                             const SessionOptions& options);
  ~EngineSession();

  const StackConfig& config() const { return load_.config; }
  const LoadResult& load() const { return load_; }
  const KindCatalog& kinds() const { return kinds_; }
  // REQUIRES: has_state().
  StateStore& store() { return *store_; }
  // False only when opened with create_state = false on a stack without state.
  bool has_state() const { return store_ != nullptr; }
  // REQUIRES: has_provider() (the session was opened with needs_api).
  Provider& provider() { return *provider_; }
  bool has_provider() const { return provider_ != nullptr; }
  const std::string& stack_root() const { return stack_root_; }

  // Options for Apply from the provider document and the flags.
  ApplyOptions apply_options(int parallelism) const;

  // The state, or nullopt after printing why it could not be read. A stack
  // opened without creating a state that has none reads as an empty one (no
  // lineage, serial 0), and nothing is created.
  std::optional<StateSnapshot> LoadState();

  // Prints diagnostics (rendered with sources) to stderr.
  void PrintDiagnostics(const std::vector<Diagnostic>& diags) const;

  // Takes the state lock for `operation`, printing the holder on conflict. A
  // lock whose holder ran on this host and no longer exists (a kill -9, a
  // crash) is taken over with a warning: whatever it had in flight is in the
  // journal, which apply and destroy finish first. A live or remote holder
  // stays a conflict.
  std::optional<LockInfo> Lock(const std::string& operation, std::chrono::milliseconds wait);
  void Unlock(const LockInfo& lock);
  // For readers (plan): waits up to `wait` while another process holds the
  // state lock. Returns the lock still held after that, or nullopt when the
  // state is free (or its lock was left by a process gone from this host).
  Result<std::optional<LockInfo>> WaitWhileLocked(std::chrono::milliseconds wait);

  const GlobalOptions& global() const { return global_; }

 private:
  EngineSession(const GlobalOptions& global) : global_(global) {}
  const GlobalOptions& global_;
  LoadResult load_;
  KindCatalog kinds_;
  std::map<std::string, Value> descriptors_;
  std::set<std::string> preview_kinds_;
  std::string stack_root_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<Provider> provider_;
  std::unique_ptr<StateStore> store_;
};

// While one exists, every diagnostic an EngineSession prints (the manifests'
// and the plan's) is also kept here, for a command that reports them as JSON
// (`plan --json`). One at a time; not thread-safe.
class DiagnosticCollector {
 public:
  DiagnosticCollector();
  ~DiagnosticCollector();
  DiagnosticCollector(const DiagnosticCollector&) = delete;
  DiagnosticCollector& operator=(const DiagnosticCollector&) = delete;
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  void Add(const std::vector<Diagnostic>& diags);

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Holds a lock taken with EngineSession::Lock and releases it on scope exit,
// whichever way the command returns.
class HeldStateLock {
 public:
  HeldStateLock(EngineSession& session, LockInfo lock)
      : session_(session), lock_(std::move(lock)) {}
  ~HeldStateLock() { session_.Unlock(lock_); }
  HeldStateLock(const HeldStateLock&) = delete;
  HeldStateLock& operator=(const HeldStateLock&) = delete;

 private:
  EngineSession& session_;
  LockInfo lock_;
};

// SIGINT/SIGTERM -> a stop request: no new operations start, running ones
// finish and are recorded. A dedicated thread reads the signals from a
// signalfd, so no handler runs at all; destruction wakes it through an
// eventfd, so a command ends as soon as its work does. One per process;
// destroyed at command end.
class InterruptWatcher {
 public:
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;
  std::stop_token token() const { return source_.get_token(); }

 private:
  void StartWatching();  // the thread reading signal_fd_ until wake_fd_

  std::stop_source source_;
  int signal_fd_ = -1;
  int wake_fd_ = -1;
  std::jthread thread_;
};

// Refreshes (unless `refresh` is false) and plans; prints problems and
// returns nullopt on error. Shared by plan, apply and destroy (cmd_plan.cc).
// `pending`: the journal's entries, which the plan shows as what apply
// completes first (plan only: apply and destroy plan after completing them).
std::optional<Plan> BuildPlan(EngineSession& session, bool refresh, bool destroy,
                              const std::vector<std::string>& targets,
                              const std::vector<std::string>& replace, std::stop_token stop,
                              std::vector<JournalEntry> pending = {});

// How apply and destroy show progress on stdout:
//   kLines  a line per operation step (not a terminal: logs, CI);
//   kLive   on a terminal, one line rewritten in place ("creating 143/200,
//           57 waiting for provisioning, 0 failed, 12s"), with failures and
//           skips printed above it;
//   kJson   one JSON object per event (--json), for machines.
class ApplyProgress {
 public:
  enum class Mode { kLines, kLive, kJson };
  // `total`: the operations the plan makes (a replace is two).
  ApplyProgress(Mode mode, bool color, int total, std::string verb);
  void Handle(const ProgressEvent& e);
  // Ends the live line; call once the apply has returned.
  void Finish();
  // The operations the plan's changes make.
  static int Operations(const Plan& plan);

 private:
  void Line(const ProgressEvent& e);
  void DrawLive(bool force);

  Mode mode_;
  bool color_;
  int total_;
  std::string verb_;  // "creating", "destroying", "applying"
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point drawn_{};
  int done_ = 0, failed_ = 0, skipped_ = 0;
  std::set<std::string> waiting_;  // "operation address" of operations provisioning
  bool live_shown_ = false;
};

// Prints an apply summary and outputs (a JSON summary event with `json`);
// returns the exit code.
int ReportApply(const ApplyResult& result, bool destroy, const EngineSession& session, bool color,
                bool json = false);

// Asks "Do you want to perform these actions?" on a TTY; refuses without one.
// A stop request (Ctrl-C) cancels the prompt.
bool Confirm(const std::string& question, std::stop_token stop);

// Writes `content` to `path` with PosixEnv().WriteFileAtomically: a crash or
// a power loss leaves the old file or the new one, never half of it, and a
// link planted beside it is never written through. The one way a command
// writes a file. False with `error` set (and no temporary file left) on
// failure.
bool WriteFileAtomically(const std::string& path, const std::string& content, std::string& error,
                         const FileAttributes& attributes = {});

}  // namespace cairn::cli
