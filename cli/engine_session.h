// EngineSession: the real implementations a stack command works with, wired
// once: the loaded manifests, the kind catalog from schemas/, the state store
// named by the stack's backend document, and (for commands that talk to the
// API) the infra provider over libcurl with the endpoint and token from the
// environment. Problems are printed to stderr as diagnostics. Beside it, what
// keeps a session's output and lock: DiagnosticCollector, HeldStateLock.
// (Ctrl-C: interrupt_watcher.h; the prompt: confirm.h; apply's output:
// apply_output.h.)
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stop_token>
#include <string>

#include "cli/command.h"
#include "cli/stack_options.h"
#include "engine/apply/apply.h"
#include "engine/manifest/loader.h"
#include "engine/operations/operations.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/open_state_store.h"
#include "engine/state/state_store.h"
#include "providers/http_transport.h"

namespace cairn {
class ReadAheadProvider;
class SchemaRegistry;
}  // namespace cairn

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
  // `cairn state rekey`: open a state whose records are not all under the
  // configured key (BackendSpec::for_rekey).
  bool for_rekey = false;
  // A directory without manifests opens with an empty stack (import
  // --generate, which writes the first ones).
  bool allow_no_manifests = false;
  // `plan --generate-config`: import documents may name resources no
  // manifest declares yet (LoadOptions::allow_undeclared_imports).
  bool allow_undeclared_imports = false;
  // `cairn test`: the state in a SQLite file in this directory instead of
  // the backend's, and the API at `endpoint` with `token` instead of the
  // provider document's or the environment's.
  std::optional<std::string> state_dir;
  std::optional<std::string> endpoint;
  std::optional<std::string> token;
  // False: no state is opened at all (`cairn workspace`, which opens the
  // workspaces' states itself); has_state() is false.
  bool open_state = true;
  // The process ends with the command (plan, drift): the loaded
  // stack, and each state PlanStack reads, are left to its end instead of
  // freed (base/discard.h). Never for a command that plans again in the
  // same process (watch, test, console).
  bool discard_at_exit = false;
  // The command only reads the API (plan, drift): the provider keeps no
  // memory of what each listed object offers, which only an update or a
  // delete uses (InfraProvider::Options::remember_actions).
  bool reads_only = false;
  // Plan and drift (with a refresh): the state is read, and the kinds it
  // records listed, while the rest of the stack loads (LoadOptions::
  // on_settings), not after; the first listing of each kind is then
  // answered with what was read (engine/provider/read_ahead.h). Nothing is
  // read ahead of a state an apply holds the lock of. Not with `preloaded`.
  bool read_ahead = false;
  // With read_ahead: every kind is listed, not only the state's (drift
  // --unmanaged).
  bool read_ahead_all_kinds = false;
  // With read_ahead: the state read ahead is refreshed there too, and
  // PlanStack, planning that state, takes the refresh instead of making it
  // (`cairn plan`). A caller taking that state for anything else (LoadState)
  // drops it.
  bool refresh_ahead = false;
  // With read_ahead: run on the reading thread once the state is read and
  // its kinds listed, before Open returns, with that state and the session's
  // provider and kinds; `stop` is requested when the load fails. Not run
  // when nothing was read ahead (an apply held the state's lock). `cairn
  // drift` detects the state's drift there while the manifests still load.
  std::function<void(const StateSnapshot& state, Provider& provider, const KindCatalog& kinds,
                     std::stop_token stop)>
      after_read_ahead;
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
  // Which API the provider talks to, as the same for two sessions that
  // talk to the same one (endpoint and token; the token hashed): "" without
  // a provider.
  const std::string& api_identity() const { return api_identity_; }
  // API requests made so far (0 without a provider).
  int64_t requests_made() const { return transport_ ? transport_->sent() : 0; }
  const std::string& stack_root() const { return stack_root_; }
  // The backend settings of the stack, for the workspace worked on.
  const BackendSpec& backend_spec() const { return spec_; }
  // The workspace worked on (stack_options.h: ChooseWorkspace).
  const std::string& workspace() const { return load_.config.workspace; }

  // Options for Apply from the provider document and the flags.
  ApplyOptions apply_options(int parallelism) const;

  // The state, or nullopt after printing why it could not be read. A stack
  // opened without creating a state that has none reads as an empty one (no
  // lineage, serial 0), and nothing is created. The first call answers with
  // the state read ahead (SessionOptions::read_ahead), if it was.
  std::optional<StateSnapshot> LoadState();

  // The plan of the stack against its state (engine/operations: PlanStack),
  // the session's stack directory filled in; nullopt after
  // printing why there is none. Its problems are printed either way.
  std::optional<Plan> PlanStack(StackPlanRequest request, std::stop_token stop);

  // The stack as loaded again (with the manifests `plan --generate-config`
  // wrote): what config() and PlanStack use from then on. Its registry is
  // the one the session was opened with.
  void ReplaceStack(LoadResult load);

  // Prints diagnostics (rendered with sources) to stderr.
  void PrintDiagnostics(const std::vector<Diagnostic>& diags) const;

  // Takes the state lock for `operation`, printing the holder on conflict,
  // and a warning when it takes over the lock of a holder gone from this
  // host (ReleaseLockOfGoneHolder, engine/state/state_lock.h).
  std::optional<LockInfo> Lock(const std::string& operation, std::chrono::milliseconds wait);
  void Unlock(const LockInfo& lock);
  // WaitWhileLocked (engine/state/state_lock.h) on the session's state; a
  // stack without one is never locked.
  Result<std::optional<LockInfo>> WaitWhileLocked(std::chrono::milliseconds wait);

  const GlobalOptions& global() const { return global_; }

 private:
  EngineSession(const GlobalOptions& global) : global_(global) {}
  // The kinds, the state store and the provider, from the stack's
  // settings; false after writing why to `err`.
  bool OpenBackends(const StackConfig& settings, const SchemaRegistry& registry,
                    const SessionOptions& options, const ChosenWorkspace& chosen,
                    std::ostream& err);
  // SessionOptions::read_ahead, on a thread of its own while the stack loads.
  void ReadAhead(const SessionOptions& options, std::stop_token stop);

  const GlobalOptions& global_;
  LoadResult load_;
  KindCatalog kinds_;
  std::map<std::string, Value> descriptors_;
  std::set<std::string> preview_kinds_;
  std::string stack_root_;
  BackendSpec spec_;
  std::unique_ptr<CountingTransport> transport_;
  std::string api_identity_;
  std::unique_ptr<Provider> provider_;
  std::unique_ptr<StateStore> store_;
  ReadAheadProvider* read_ahead_provider_ = nullptr;  // provider_, with read_ahead
  std::optional<StateSnapshot> read_ahead_state_;
  std::optional<RefreshResult> read_ahead_refresh_;  // of read_ahead_state_
  bool discard_at_exit_ = false;                     // SessionOptions::discard_at_exit
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

}  // namespace cairn::cli
