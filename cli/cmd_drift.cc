// cairn drift: the live API against what Cairn last applied.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/discard.h"
#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/operations/operations.h"
#include "engine/report/drift_report.h"
#include "engine/state/workspaces.h"

namespace cairn::cli {
namespace {

// What the workspaces of a stack (`root`, `spec`) track, but `skip`'s, as
// "kind/id": one stack's workspaces manage their objects, not anyone else.
// How many states were read, or nullopt after printing why they could not be.
std::optional<size_t> AddWorkspacesObjects(const EngineSession& s, const std::string& root,
                                           const BackendSpec& spec, const std::string& skip,
                                           std::set<std::string>& managed) {
  Result<std::vector<std::string>> names = ListWorkspaces(root, spec);
  if (!names.ok()) {
    std::cerr << "error: cannot list the workspaces of " << root << ": "
              << Redact(names.status().message()) << "\n";
    return std::nullopt;
  }
  size_t read = 0;
  for (const std::string& name : *names) {
    if (name == skip) continue;
    BackendSpec ws = spec;
    ws.workspace = name;
    auto store = OpenExistingStateStore(root, ws);
    if (!store.ok() && store.status().code() == StatusCode::kNotFound) continue;
    Result<StateSnapshot> state =
        store.ok() ? (*store)->Load() : Result<StateSnapshot>(store.status());
    if (!state.ok()) {
      std::cerr << "error: cannot read the state of workspace " << name << " of " << root << ": "
                << Redact(state.status().message()) << "\n";
      return std::nullopt;
    }
    ++read;
    for (const auto& [addr, rs] : state->resources) {
      managed.insert(rs.kind + "/" + CanonicalId(s.kinds(), rs.id));
    }
  }
  return read;
}

std::function<int()> SetupDrift(CLI::App& sub, const GlobalOptions& global) {
  struct Flags {
    StackFlags stack;
    bool json = false, unmanaged = false;
    std::vector<std::string> name_prefixes;
    std::vector<std::string> managed_by;
  };
  auto f = std::make_shared<Flags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json, "Print the report as JSON");
  sub.add_flag("--unmanaged", f->unmanaged,
               "Also list live resources of the managed kinds that no state tracks");
  sub.add_option("--name-prefix", f->name_prefixes,
                 "With --unmanaged: only resources whose name starts with PREFIX (repeatable)")
      ->type_name("PREFIX")
      ->expected(1)
      ->allow_extra_args(false);
  sub.add_option("--managed-by", f->managed_by,
                 "With --unmanaged: resources tracked by the stack in DIR are managed too "
                 "(repeatable; other stacks sharing the project)")
      ->type_name("DIR")
      ->expected(1)
      ->allow_extra_args(false);
  sub.footer(
      "Compares the live resources with the state (what was last applied): fields changed\n"
      "outside Cairn, resources deleted outside Cairn, and resources the API reports failed.\n"
      "Fields a resource's lifecycle.ignore_changes names are listed apart and not counted\n"
      "('cairn apply --refresh-only' records their live values). The manifests are loaded as\n"
      "by plan (give the variables they need). With --unmanaged, also live resources no state\n"
      "tracks (the objects the stack's data sources read are its own): in a project shared by\n"
      "several stacks, subtract theirs with --managed-by (their state is read with their\n"
      "backend settings alone: their manifests' other variables are not needed) and keep to\n"
      "this stack's names with --name-prefix. What the stack's other workspaces track, and\n"
      "what any workspace of a --managed-by stack tracks, is managed too. Reads only: a stack\n"
      "never applied stays without a state. Exit 0 no drift, 2 drift, 1 error.\n\n"
      "Examples:\n  cairn drift examples/quickstart --unmanaged\n"
      "  cairn drift stacks/web --unmanaged --name-prefix web- --managed-by stacks/billing");
  return [f, &global]() {
    if ((!f->name_prefixes.empty() || !f->managed_by.empty()) && !f->unmanaged) {
      std::cerr << "error: --name-prefix and --managed-by apply to --unmanaged\n";
      return 1;
    }
    // Live against the state; the manifests say which fields are ignored and
    // which objects the stack reads. Without --unmanaged, which reads the
    // stack's data sources, drift needs only the state and the API: it is
    // detected while the manifests load, their ignore_changes set apart once
    // they have.
    std::optional<StackDrift> ahead;
    SessionOptions session_options{.create_state = false,
                                   .discard_at_exit = true,
                                   .reads_only = true,
                                   .read_ahead = true,
                                   .read_ahead_all_kinds = f->unmanaged};
    if (!f->unmanaged) {
      session_options.after_read_ahead = [&](const StateSnapshot& state, Provider& provider,
                                             const KindCatalog& kinds, std::stop_token stop) {
        ahead = DetectStateDrift(state, provider, kinds, std::move(stop));
      };
    }
    auto session = EngineSession::Open(f->stack, global, session_options);
    if (!session) return 1;
    auto state = session->LoadState();
    if (!state) return 1;
    StackDriftOptions options;
    options.unmanaged = {.enabled = f->unmanaged, .name_prefixes = f->name_prefixes};
    if (f->unmanaged &&
        !AddWorkspacesObjects(*session, session->stack_root(), session->backend_spec(),
                              session->workspace(), options.unmanaged.managed_elsewhere)) {
      return 1;
    }
    for (const auto& dir : f->managed_by) {
      StackFlags other;
      other.paths = {dir};
      other.workspace = kDefaultWorkspace;  // its workspaces are all read below
      auto them = EngineSession::Open(other, global,
                                      {.settings_only = true,
                                       .backend_only = true,
                                       .create_state = false,
                                       .open_state = false});
      if (!them) {
        std::cerr << "error: --managed-by " << dir
                  << ": cannot read the backend settings of the stack there (above)\n";
        return 1;
      }
      std::optional<size_t> states =
          AddWorkspacesObjects(*session, them->stack_root(), them->backend_spec(), "",
                               options.unmanaged.managed_elsewhere);
      if (!states) return 1;
      if (*states == 0) {
        std::cerr << "warning: --managed-by " << dir
                  << ": that stack has no state yet, so it manages nothing\n";
      }
    }
    StackDrift drift;
    if (ahead) {
      drift = std::move(*ahead);
      SetIgnoredFields(drift.report, IgnoredFieldsOf(session->config()));
    } else {
      drift = DetectStackDrift(session->config(), *state, session->provider(), session->kinds(),
                               options);
    }
    if (!drift.diagnostics.empty()) session->PrintDiagnostics(drift.diagnostics);
    if (!drift.ok()) return 1;
    if (f->json) {
      std::cout << Redact(DriftToJson(drift.report).dump(2)) << "\n";
    } else {
      std::cout << RenderDriftText(drift.report, UseColor(global, STDOUT_FILENO));
    }
    const int code = drift.report.has_drift() ? 2 : 0;
    DiscardAtExit(std::move(drift));
    DiscardAtExit(std::move(*state));
    return code;
  };
}

}  // namespace

CAIRN_COMMAND("drift", "Detect changes made outside Cairn", 50, SetupDrift);

}  // namespace cairn::cli
