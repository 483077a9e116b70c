#include "cli/engine_session.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "base/clock.h"
#include "base/env.h"
#include "base/redact.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/expr.h"
#include "engine/operations/operations.h"
#include "engine/report/apply_report.h"
#include "engine/report/plan_report.h"
#include "engine/state/open_state_store.h"
#include "engine/state/state_lock.h"
#include "providers/infra/curl_transport.h"
#include "providers/infra/infra_provider.h"
#include "providers/infra/kind_wire.h"

namespace cairn::cli {
namespace {

DiagnosticCollector* g_collector = nullptr;

int TimeoutSeconds(const ProviderConfig& p, const std::string& name, int fallback) {
  auto it = p.timeouts.find(name);
  return it == p.timeouts.end() ? fallback : it->second;
}

}  // namespace

std::unique_ptr<EngineSession> EngineSession::Open(const StackFlags& flags,
                                                   const GlobalOptions& global,
                                                   const SessionOptions& options) {
  std::unique_ptr<EngineSession> s(new EngineSession(global));
  LoadOptions load_options;
  std::string error;
  if (!ToLoadOptions(flags, load_options, error)) {
    std::cerr << "error: " << error << "\n";
    return nullptr;
  }
  if (options.stack_dir) load_options.paths = {*options.stack_dir};
  load_options.plan_vars = options.plan_vars;
  load_options.settings_only = options.settings_only;
  load_options.backend_only = options.backend_only;
  s->load_ = options.preloaded ? std::move(*options.preloaded) : LoadStack(load_options);
  if (options.allow_no_manifests) {
    auto& d = s->load_.diagnostics;
    d.erase(std::remove_if(d.begin(), d.end(),
                           [](const Diagnostic& x) { return x.code == "no_manifests"; }),
            d.end());
  }
  if (!s->load_.diagnostics.empty()) s->PrintDiagnostics(s->load_.diagnostics);
  if (!s->load_.ok() || !s->load_.registry) return nullptr;

  const SchemaRegistry& registry = *s->load_.registry;
  s->kinds_ = KindCatalogFrom(registry);
  for (const auto& kind : registry.kinds()) {
    s->descriptors_[kind] = registry.Document(kind).value("x-cairn", Value::object());
    if (registry.Wire(kind).value("api", "") == "preview") s->preview_kinds_.insert(kind);
  }

  std::error_code ec;
  auto root =
      std::filesystem::absolute(s->load_.config.root.empty() ? "." : s->load_.config.root, ec);
  s->stack_root_ = std::filesystem::weakly_canonical(root, ec).string();

  const BackendConfig& b = s->load_.config.backend;
  const BackendSpec spec{b.type, b.path, b.url_env, b.stack_name};
  auto store = options.create_state ? OpenStateStore(s->stack_root_, spec)
                                    : OpenExistingStateStore(s->stack_root_, spec);
  if (store.ok()) {
    s->store_ = std::move(*store);
  } else if (options.create_state || store.status().code() != StatusCode::kNotFound) {
    std::cerr << "error: cannot open the state: " << Redact(store.status().message()) << "\n";
    return nullptr;
  }

  if (!options.needs_api || options.backend_only) return s;
  const ProviderConfig& p = s->load_.config.provider;
  std::string endpoint = p.endpoint;
  if (endpoint.empty()) {
    const char* env = std::getenv("CAIRN_ENDPOINT");
    endpoint = env ? env : "";
  }
  if (endpoint.empty()) {
    std::cerr << "error: no API endpoint: set CAIRN_ENDPOINT (e.g. http://127.0.0.1:8080) "
                 "or `endpoint` in the provider document\n";
    return nullptr;
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const char* token = std::getenv(p.token_env.c_str());
  if (token == nullptr || *token == '\0') {
    std::cerr << "error: no API token: set the environment variable " << p.token_env
              << " (tokens are never read from manifests)\n";
    return nullptr;
  }
  RegisterSecret(token);
  InfraProvider::Options po;
  po.endpoint = endpoint;
  po.token = token;
  po.connect_timeout = std::chrono::seconds(TimeoutSeconds(p, "connect", 5));
  po.request_timeout = std::chrono::seconds(TimeoutSeconds(p, "request", 30));
  po.operation_deadline = std::chrono::seconds(TimeoutSeconds(p, "operation", 600));
  po.read_deadline = std::chrono::seconds(TimeoutSeconds(p, "read", 60));
  po.user_agent = std::string("cairn/") + CAIRN_VERSION;
  s->transport_ = std::make_unique<CurlTransport>();
  auto provider =
      std::make_unique<InfraProvider>(po, s->descriptors_, *s->transport_, SystemClock());
  if (!provider->descriptor_status().ok()) {
    std::cerr << "error: " << provider->descriptor_status().message() << "\n";
    return nullptr;
  }
  s->provider_ = std::move(provider);
  return s;
}

EngineSession::~EngineSession() = default;

ApplyOptions EngineSession::apply_options(int parallelism) const {
  const ProviderConfig& p = load_.config.provider;
  ApplyOptions o;
  o.parallelism = parallelism > 0 ? parallelism : (p.parallelism > 0 ? p.parallelism : 10);
  o.create_timeout = std::chrono::seconds(TimeoutSeconds(p, "create", 600));
  o.update_timeout = std::chrono::seconds(TimeoutSeconds(p, "update", 600));
  o.delete_timeout = std::chrono::seconds(TimeoutSeconds(p, "delete", 600));
  o.find_by_name_kinds = preview_kinds_;
  return o;
}

std::optional<StateSnapshot> EngineSession::LoadState() {
  if (!store_) return StateSnapshot();
  auto state = store_->Load();
  if (!state.ok()) {
    std::cerr << "error: cannot read the state: " << Redact(state.status().message()) << "\n";
    return std::nullopt;
  }
  return std::move(*state);
}

DiagnosticCollector::DiagnosticCollector() { g_collector = this; }
DiagnosticCollector::~DiagnosticCollector() { g_collector = nullptr; }
void DiagnosticCollector::Add(const std::vector<Diagnostic>& diags) {
  diagnostics_.insert(diagnostics_.end(), diags.begin(), diags.end());
}

void EngineSession::PrintDiagnostics(const std::vector<Diagnostic>& diags) const {
  if (g_collector != nullptr) g_collector->Add(diags);
  RenderOptions render;
  render.color = UseColor(global_, STDERR_FILENO);
  SourceFiles sources = load_.sources;
  std::cerr << RenderDiagnostics(diags, sources, render);
}

std::optional<LockInfo> EngineSession::Lock(const std::string& operation,
                                            std::chrono::milliseconds wait) {
  auto held = store_->CurrentLock();
  if (held.ok() && held->has_value() && LockHolderIsGone((*held)->holder)) {
    const LockInfo& stale = **held;
    // By id: if another process took the lock over first, this removes nothing.
    if (store_->ForceUnlock(stale.id).ok()) {
      std::cerr << "warning: took over the state lock " << stale.id << " left by "
                << Redact(stale.holder) << " (operation " << stale.operation << " since "
                << FormatIsoTime(stale.created_at)
                << "): that process no longer runs on this host\n";
    }
  }
  auto lock = store_->Lock(operation, wait);
  if (!lock.ok()) {
    std::cerr << "error: " << Redact(lock.status().message()) << "\n";
    return std::nullopt;
  }
  return *lock;
}

Result<std::optional<LockInfo>> EngineSession::WaitWhileLocked(std::chrono::milliseconds wait) {
  if (!store_) return std::optional<LockInfo>();  // no state, no lock
  std::optional<LockInfo> held_by;
  auto free = WaitForLock(SystemClock(), wait, [&]() -> Result<LockInfo> {
    auto held = store_->CurrentLock();
    if (!held.ok()) return held.status();
    if (!held->has_value() || LockHolderIsGone((*held)->holder)) {
      held_by.reset();
      return LockInfo{};
    }
    held_by = **held;
    return LockConflict(**held);
  });
  if (free.ok()) return std::optional<LockInfo>();
  if (free.status().code() == StatusCode::kConflict && held_by) return held_by;
  return free.status();
}

void EngineSession::Unlock(const LockInfo& lock) {
  if (Status st = store_->Unlock(lock.id); !st.ok()) {
    std::cerr << "warning: could not release the state lock " << lock.id << ": " << st.message()
              << "\n";
  }
}

namespace {

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptWatcher::InterruptWatcher() {
  sigset_t set = InterruptSignals();
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (signal_fd_ < 0 || wake_fd_ < 0) {
    // Without them the signals keep their default action: Ctrl-C ends the
    // process, and the journal lets the next apply finish the job.
    std::cerr << "warning: cannot watch for Ctrl-C (" << std::strerror(errno)
              << "); an interrupt will stop at once\n";
    return;
  }
  // Blocked here, inherited by every thread started after: they stay pending
  // for the signalfd, and no thread is interrupted by them.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  try {
    StartWatching();
  } catch (...) {  // no thread: leave the signals as they were
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    close(signal_fd_);
    close(wake_fd_);
    throw;
  }
}

void InterruptWatcher::StartWatching() {
  thread_ = std::jthread([this] {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    for (;;) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;  // the command is over
      signalfd_siginfo info;
      if ((fds[0].revents & POLLIN) != 0 && read(signal_fd_, &info, sizeof info) == sizeof info) {
        std::cerr << "\nInterrupt received: no new operations will start; waiting for the ones "
                     "in flight to finish and be recorded.\n";
        source_.request_stop();
        return;
      }
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
    thread_.join();
    sigset_t set = InterruptSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  }
  if (signal_fd_ >= 0) close(signal_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

ApplyProgress::ApplyProgress(Mode mode, bool color, int total, std::string verb)
    : mode_(mode), color_(color), total_(total), verb_(std::move(verb)) {}

int ApplyProgress::Operations(const Plan& plan) {
  int n = 0;
  for (const auto& c : plan.changes) {
    if (c.action == Action::kReplace)
      n += 2;
    else if (c.action != Action::kNoOp)
      n += 1;
  }
  return n;
}

void ApplyProgress::Handle(const ProgressEvent& e) {
  const std::string key = e.operation + " " + e.address;
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
  if (mode_ == Mode::kJson) {
    static const char* kNames[] = {"start",  "waiting", "still_running", "done",
                                   "failed", "skipped", "recovered"};
    Value j = {{"event", kNames[static_cast<int>(e.phase)]},
               {"address", e.address},
               {"operation", e.operation},
               {"elapsed_ms", e.elapsed.count()}};
    if (!e.id.empty()) j["id"] = e.id;
    if (!e.message.empty()) j["message"] = e.message;
    std::cout << Redact(j.dump()) << std::endl;
    return;
  }
  if (mode_ == Mode::kLines) return Line(e);
  // Live: what a user must read stays; the rest is the counter line.
  if (e.phase == ProgressEvent::Phase::kFailed || e.phase == ProgressEvent::Phase::kSkipped ||
      e.phase == ProgressEvent::Phase::kRecovered) {
    if (live_shown_) std::cout << "\r\033[K";
    Line(e);
    live_shown_ = false;
  }
  DrawLive(e.phase != ProgressEvent::Phase::kStart);
}

void ApplyProgress::DrawLive(bool force) {
  auto now = std::chrono::steady_clock::now();
  // At most ten redraws a second; every one that changes a count shows.
  if (!force && now - drawn_ < std::chrono::milliseconds(100)) return;
  drawn_ = now;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
  std::string line = verb_ + " " + std::to_string(done_) + "/" + std::to_string(total_) + ", " +
                     std::to_string(waiting_.size()) + " waiting for provisioning, " +
                     std::to_string(failed_) + " failed" +
                     (skipped_ ? ", " + std::to_string(skipped_) + " skipped" : "") + ", " +
                     std::to_string(secs) + "s";
  std::cout << "\r\033[K" << line << std::flush;
  live_shown_ = true;
}

void ApplyProgress::Finish() {
  if (mode_ != Mode::kLive) return;
  DrawLive(true);
  std::cout << "\n" << std::flush;
  live_shown_ = false;
}

void ApplyProgress::Line(const ProgressEvent& e) {
  // "0.6s" under ten seconds, "42s" above.
  auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(e.elapsed).count() / 100;
  std::string secs = tenths < 100 ? std::to_string(tenths / 10) + "." + std::to_string(tenths % 10)
                                  : std::to_string(tenths / 10);
  std::string ing = e.operation == "create"   ? "creating"
                    : e.operation == "update" ? "updating"
                                              : "destroying";
  std::string noun = e.operation == "create"   ? "creation"
                     : e.operation == "update" ? "update"
                                               : "destruction";
  const char* bold = color_ ? "\033[1m" : "";
  const char* reset = color_ ? "\033[0m" : "";
  std::string line = std::string(bold) + e.address + ":" + reset + " ";
  switch (e.phase) {
    case ProgressEvent::Phase::kStart:
      line += ing + "...";
      break;
    case ProgressEvent::Phase::kWaiting:
      return;  // the done line follows
    case ProgressEvent::Phase::kStillRunning:
      if (!e.message.empty()) return;  // internal milestones stay quiet
      line += "still " + ing + "... [" + secs + "s elapsed]";
      break;
    case ProgressEvent::Phase::kDone:
      line += noun + " complete after " + secs + "s" + (e.id.empty() ? "" : " [id=" + e.id + "]");
      break;
    case ProgressEvent::Phase::kFailed:
      line += std::string(color_ ? "\033[31m" : "") + e.operation + " failed" + reset + " after " +
              secs + "s: " + e.message;
      break;
    case ProgressEvent::Phase::kSkipped:
      line += "skipped: " + e.message;
      break;
    case ProgressEvent::Phase::kRecovered:
      line += "recovered the interrupted " + e.operation + " (" + e.message + ")" +
              (e.id.empty() ? "" : " [id=" + e.id + "]");
      break;
  }
  std::cout << Redact(line) << std::endl;
}

int ReportApply(const ApplyResult& result, bool destroy, const EngineSession& session, bool color,
                bool json) {
  if (!result.diagnostics.empty()) session.PrintDiagnostics(result.diagnostics);
  const auto& s = result.summary;
  std::set<std::string> sensitive;
  for (const auto& o : session.config().outputs) {
    if (o.sensitive) sensitive.insert(o.name);
  }
  if (json) {
    Value outputs = Value::object();
    for (const auto& [name, value] : result.outputs) {
      outputs[name] = sensitive.count(name) ? Value("(sensitive)") : value;
    }
    Value j = {{"event", "summary"},     {"ok", result.ok()},
               {"added", s.created},     {"changed", s.updated},
               {"replaced", s.replaced}, {"destroyed", s.deleted},
               {"moved", s.moved},       {"recovered", s.recovered},
               {"failed", s.failed},     {"held_back", s.held_back},
               {"skipped", s.skipped},   {"interrupted", s.interrupted},
               {"outputs", outputs},     {"checks", CheckResultsToJson(result.checks)}};
    std::cout << Redact(j.dump()) << std::endl;
    return result.ok() ? 0 : 1;
  }
  std::cout << "\n" << ApplySummaryLine(s, destroy, result.ok(), color) << "\n";
  if (!result.checks.empty()) std::cout << ChecksLine(result.checks, true) << "\n";
  std::cout << RenderApplyOutputs(result.outputs, sensitive);
  return result.ok() ? 0 : 1;
}

bool Confirm(const std::string& question, std::stop_token stop) {
  if (isatty(STDIN_FILENO) != 1) {
    std::cerr << "error: refusing to make changes without confirmation: standard input is "
                 "not a terminal. Review the plan and pass --auto-approve.\n";
    return false;
  }
  std::cout << "\n" << question << "\n  Only 'yes' will be accepted: " << std::flush;
  // Polled rather than a blocking read, so that Ctrl-C (a stop request from
  // the InterruptWatcher) cancels the prompt at once.
  std::string answer;
  for (;;) {
    if (stop.stop_requested()) {
      std::cout << "\nCancelled: nothing was changed.\n";
      return false;
    }
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0) continue;
    char c;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n <= 0 || c == '\n') break;
    answer += c;
  }
  if (answer != "yes") {
    std::cout << "Cancelled: nothing was changed.\n";
    return false;
  }
  return true;
}

bool WriteFileAtomically(const std::string& path, const std::string& content, std::string& error,
                         const FileAttributes& attributes) {
  Status st = PosixEnv().WriteFileAtomically(path, content, attributes);
  if (!st.ok()) error = st.message();
  return st.ok();
}

}  // namespace cairn::cli
