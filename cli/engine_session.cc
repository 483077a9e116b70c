#include "cli/engine_session.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <sstream>

#include "base/clock.h"
#include "base/discard.h"
#include "base/redact.h"
#include "base/schema/schema_registry.h"
#include "engine/operations/operations.h"
#include "engine/provider/read_ahead.h"
#include "engine/state/open_state_store.h"
#include "engine/state/state_lock.h"
#include "engine/state/workspaces.h"
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
  // The stack's workspace, chosen where the stack is (a saved plan's
  // directory, not the plan file's).
  ChosenWorkspace chosen;
  if (!ChooseWorkspace(flags.workspace, load_options.paths, chosen, error)) {
    std::cerr << "error: " << error << "\n";
    return nullptr;
  }
  load_options.workspace = chosen.name;
  load_options.plan_vars = options.plan_vars;
  load_options.settings_only = options.settings_only;
  load_options.backend_only = options.backend_only;
  load_options.allow_undeclared_imports = options.allow_undeclared_imports;
  s->discard_at_exit_ = options.discard_at_exit;
  // Plan and drift read the state and list the live objects while the rest
  // of the stack loads: they need only its settings. Opening the state and
  // the API is done then too (as after the load otherwise); what it says
  // waits for the load's diagnostics, which come first.
  std::string open_error;
  bool opened = false;
  std::stop_source stop_reading;
  std::future<void> reading;
  if (options.read_ahead && !options.preloaded) {
    load_options.on_settings = [&](const StackConfig& settings,
                                   const std::shared_ptr<const SchemaRegistry>& registry) {
      if (!registry) return;
      std::ostringstream err;
      opened = true;
      if (!s->OpenBackends(settings, *registry, options, chosen, err)) {
        open_error = err.str();
        return;
      }
      reading = std::async(std::launch::async,
                           [&, stop = stop_reading.get_token()] { s->ReadAhead(options, stop); });
    };
  }
  s->load_ = options.preloaded ? std::move(*options.preloaded) : LoadStack(load_options);
  s->load_.config.workspace = chosen.name;
  if (options.allow_no_manifests) {
    auto& d = s->load_.diagnostics;
    d.erase(std::remove_if(d.begin(), d.end(),
                           [](const Diagnostic& x) { return x.code == "no_manifests"; }),
            d.end());
  }
  if (!s->load_.diagnostics.empty()) s->PrintDiagnostics(s->load_.diagnostics);
  const bool loaded = s->load_.ok() && s->load_.registry;
  if (reading.valid()) {
    if (!loaded) stop_reading.request_stop();
    reading.get();
  }
  if (!loaded) return nullptr;
  if (opened) {
    std::cerr << open_error;
    return open_error.empty() ? std::move(s) : nullptr;
  }
  if (!s->OpenBackends(s->load_.config, *s->load_.registry, options, chosen, std::cerr)) {
    return nullptr;
  }
  return s;
}

bool EngineSession::OpenBackends(const StackConfig& settings, const SchemaRegistry& registry,
                                 const SessionOptions& options, const ChosenWorkspace& chosen,
                                 std::ostream& err) {
  kinds_ = KindCatalogFrom(registry);
  for (const auto& kind : registry.kinds()) {
    descriptors_[kind] = registry.Document(kind).value("x-cairn", Value::object());
    if (registry.Wire(kind).value("api", "") == "preview") preview_kinds_.insert(kind);
  }

  std::error_code ec;
  auto root = std::filesystem::absolute(settings.root.empty() ? "." : settings.root, ec);
  stack_root_ = std::filesystem::weakly_canonical(root, ec).string();

  const BackendConfig& b = settings.backend;
  BackendSpec spec{b.type, b.path, b.url_env, b.stack_name, chosen.name};
  if (options.state_dir) spec = BackendSpec{"sqlite", *options.state_dir + "/state.db", "", "", ""};
  spec.encryption = b.encryption;
  spec.for_rekey = options.for_rekey;
  spec_ = spec;
  // A workspace other than default exists only once made (`cairn workspace
  // new`): its state is never created on the side.
  const bool named_workspace = !IsDefaultWorkspace(spec.workspace);
  if (options.open_state) {
    auto store = options.create_state && !named_workspace
                     ? OpenStateStore(stack_root_, spec)
                     : OpenExistingStateStore(stack_root_, spec);
    if (store.ok()) {
      store_ = std::move(*store);
    } else if (named_workspace && store.status().code() == StatusCode::kNotFound) {
      err << "error: unknown workspace \"" << spec.workspace << "\""
          << (chosen.source.empty() ? "" : " (from " + chosen.source + ")")
          << "; the workspaces are " << Redact(KnownWorkspacesText(stack_root_, spec))
          << "\nCreate it with: cairn workspace new " << spec.workspace << "\n";
      return false;
    } else if (options.create_state || store.status().code() != StatusCode::kNotFound) {
      err << "error: cannot open the state: " << Redact(store.status().message()) << "\n";
      return false;
    }
  }

  if (!options.needs_api || options.backend_only) return true;
  const ProviderConfig& p = settings.provider;
  std::string endpoint = options.endpoint.value_or(p.endpoint);
  if (endpoint.empty()) {
    const char* env = std::getenv("CAIRN_ENDPOINT");
    endpoint = env ? env : "";
  }
  if (endpoint.empty()) {
    err << "error: no API endpoint: set CAIRN_ENDPOINT (e.g. http://127.0.0.1:8080) "
           "or `endpoint` in the provider document\n";
    return false;
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const char* token = options.token ? options.token->c_str() : std::getenv(p.token_env.c_str());
  if (token == nullptr || *token == '\0') {
    err << "error: no API token: set the environment variable " << p.token_env
        << " (tokens are never read from manifests)\n";
    return false;
  }
  RegisterSecret(token);
  if (Status st = CheckTokenTransport(endpoint, global_.insecure_http); !st.ok()) {
    err << "error: " << st.message() << "\n";
    return false;
  }
  CurlTransport::Options transport;
  transport.user_agent = std::string("cairn/") + CAIRN_VERSION;
  transport.ca_file = p.ca_bundle;
  if (const char* ca = std::getenv("CAIRN_CA_BUNDLE"); transport.ca_file.empty() && ca && *ca) {
    transport.ca_file = ca;
  }
  if (!transport.ca_file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(transport.ca_file, ec)) {
      err << "error: the CA bundle " << transport.ca_file
          << " (ca_bundle in the provider document, or CAIRN_CA_BUNDLE) is not a "
             "readable file\n";
      return false;
    }
  }
  InfraProvider::Options po;
  po.endpoint = endpoint;
  po.token = token;
  po.connect_timeout = std::chrono::seconds(TimeoutSeconds(p, "connect", 5));
  po.request_timeout = std::chrono::seconds(TimeoutSeconds(p, "request", 30));
  po.operation_deadline = std::chrono::seconds(TimeoutSeconds(p, "operation", 600));
  po.read_deadline = std::chrono::seconds(TimeoutSeconds(p, "read", 60));
  po.user_agent = std::string("cairn/") + CAIRN_VERSION;
  po.remember_actions = !options.reads_only;
  transport_ =
      std::make_unique<CountingTransport>(std::make_unique<CurlTransport>(std::move(transport)));
  api_identity_ = endpoint + " " + std::to_string(std::hash<std::string_view>{}(token));
  auto provider = std::make_unique<InfraProvider>(po, descriptors_, *transport_, SystemClock());
  if (!provider->descriptor_status().ok()) {
    err << "error: " << provider->descriptor_status().message() << "\n";
    return false;
  }
  if (options.read_ahead) {
    auto ahead = std::make_unique<ReadAheadProvider>(std::move(provider));
    read_ahead_provider_ = ahead.get();
    provider_ = std::move(ahead);
  } else {
    provider_ = std::move(provider);
  }
  return true;
}

void EngineSession::ReadAhead(const SessionOptions& options, std::stop_token stop) {
  std::set<std::string> kinds;
  if (options.read_ahead_all_kinds) {
    for (const auto& [kind, info] : kinds_) kinds.insert(kind);
  }
  if (store_) {
    // A state an apply is changing is read once it is done (plan waits for
    // the lock): nothing is read ahead of it.
    auto held = cairn::WaitWhileLocked(*store_, SystemClock(), std::chrono::milliseconds(0));
    if (!held.ok() || held->has_value()) return;
    auto recorded = store_->RecordedKinds();
    if (!recorded.ok()) return;  // read again when asked for, which reports the error
    kinds.merge(*recorded);
  }
  // The kinds are listed while the state is read. One recorded meanwhile
  // is listed when the refresh asks; one gone is listed for nothing.
  std::future<void> listing;
  if (read_ahead_provider_ != nullptr && !kinds.empty()) {
    listing =
        std::async(std::launch::async, [&, stop] { read_ahead_provider_->ReadAhead(kinds, stop); });
  }
  if (!store_) {
    read_ahead_state_ = StateSnapshot();
  } else if (auto state = store_->Load(); state.ok()) {
    read_ahead_state_ = std::move(*state);
  }
  if (listing.valid()) listing.get();
  if (options.refresh_ahead && read_ahead_state_ && provider_) {
    RefreshOptions refresh;
    refresh.stop = stop;
    read_ahead_refresh_ = Refresh(*read_ahead_state_, *provider_, kinds_, refresh);
  }
  if (options.after_read_ahead && read_ahead_state_ && provider_) {
    options.after_read_ahead(*read_ahead_state_, *provider_, kinds_, stop);
  }
}

EngineSession::~EngineSession() {
  if (!discard_at_exit_) return;
  // The store and the provider go as the members' order has them, closing
  // what they hold; the stack, which holds nothing but memory, is left to
  // the end of the process.
  store_.reset();
  provider_.reset();
  transport_.reset();
  DiscardAtExit(std::move(load_));
  if (read_ahead_state_) DiscardAtExit(std::move(*read_ahead_state_));
}

void EngineSession::ReplaceStack(LoadResult load) { load_ = std::move(load); }

std::optional<Plan> EngineSession::PlanStack(StackPlanRequest request, std::stop_token stop) {
  std::optional<RefreshResult> refreshed = std::move(read_ahead_refresh_);
  auto state = LoadState();
  if (!state) return std::nullopt;
  if (refreshed) request.refreshed = &*refreshed;
  request.stack_dir = stack_root_;
  request.discard_at_exit = discard_at_exit_;
  PlanResult pr =
      cairn::PlanStack(load_.config, *state, provider_.get(), kinds_, request, std::move(stop));
  if (discard_at_exit_) DiscardAtExit(std::move(*state));
  if (!pr.diagnostics.empty()) PrintDiagnostics(pr.diagnostics);
  if (!pr.ok()) return std::nullopt;
  return std::move(pr.plan);
}

ApplyOptions EngineSession::apply_options(int parallelism) const {
  const ProviderConfig& p = load_.config.provider;
  ApplyOptions o;
  o.parallelism =
      parallelism > 0 ? parallelism : (p.parallelism > 0 ? p.parallelism : kDefaultParallelism);
  o.create_timeout = std::chrono::seconds(TimeoutSeconds(p, "create", 600));
  o.update_timeout = std::chrono::seconds(TimeoutSeconds(p, "update", 600));
  o.delete_timeout = std::chrono::seconds(TimeoutSeconds(p, "delete", 600));
  o.find_by_name_kinds = preview_kinds_;
  o.kinds = kinds_;
  o.write_only_values = WriteOnlyValues(load_.config, kinds_);
  return o;
}

std::optional<StateSnapshot> EngineSession::LoadState() {
  if (read_ahead_state_) {
    std::optional<StateSnapshot> state = std::move(read_ahead_state_);
    read_ahead_state_.reset();
    read_ahead_refresh_.reset();  // a refresh of this state, which is handed out
    return state;
  }
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
  if (std::optional<LockInfo> stale = ReleaseLockOfGoneHolder(*store_)) {
    std::cerr << "warning: took over the state lock " << stale->id << " left by "
              << Redact(stale->holder) << " (operation " << stale->operation << " since "
              << FormatIsoTime(stale->created_at)
              << "): that process no longer runs on this host\n";
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
  return cairn::WaitWhileLocked(*store_, SystemClock(), wait);
}

void EngineSession::Unlock(const LockInfo& lock) {
  if (Status st = store_->Unlock(lock.id); !st.ok()) {
    std::cerr << "warning: could not release the state lock " << lock.id << ": " << st.message()
              << "\n";
  }
}

}  // namespace cairn::cli
