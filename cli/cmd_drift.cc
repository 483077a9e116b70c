// cairn drift: the live API against what Cairn last applied.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/report/drift_report.h"

namespace cairn::cli {
namespace {

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
      "With --unmanaged, also live resources no state tracks: in a project shared by several\n"
      "stacks, subtract theirs with --managed-by and keep to this stack's names with\n"
      "--name-prefix. Exit 0 no drift, 2 drift, 1 error.\n\n"
      "Examples:\n  cairn drift examples/quickstart --unmanaged\n"
      "  cairn drift stacks/web --unmanaged --name-prefix web- --managed-by stacks/billing");
  return [f, &global]() {
    // Live against the state: the manifests' resources play no part.
    auto session = EngineSession::Open(f->stack, global, {.settings_only = true});
    if (!session) return 1;
    auto state = session->LoadState();
    if (!state) return 1;
    RefreshOptions ro;
    ro.canonical_id = session->canonical_id();
    if (f->unmanaged) {
      for (const auto& [kind, info] : session->kinds()) ro.extra_kinds.insert(kind);
    }
    UnmanagedScope scope{.enabled = f->unmanaged, .name_prefixes = f->name_prefixes};
    if ((!f->name_prefixes.empty() || !f->managed_by.empty()) && !f->unmanaged) {
      std::cerr << "error: --name-prefix and --managed-by apply to --unmanaged\n";
      return 1;
    }
    for (const auto& dir : f->managed_by) {
      StackFlags other;
      other.paths = {dir};
      auto them = EngineSession::Open(other, global, {.needs_api = false, .settings_only = true});
      if (!them) return 1;
      auto theirs = them->LoadState();
      if (!theirs) return 1;
      auto canon = session->canonical_id();
      for (const auto& [addr, rs] : theirs->resources) {
        scope.managed_elsewhere.insert(rs.kind + "/" + (canon ? canon(rs.id) : rs.id));
      }
    }
    RefreshResult refresh = Refresh(*state, session->provider(), ro);
    if (!refresh.ok()) {
      session->PrintDiagnostics(refresh.diagnostics);
      return 1;
    }
    DriftReport report =
        DetectDrift(*state, refresh, session->kinds(), scope, session->canonical_id());
    if (f->json) {
      std::cout << Redact(DriftToJson(report).dump(2)) << "\n";
    } else {
      std::cout << RenderDriftText(report, UseColor(global, STDOUT_FILENO));
    }
    return report.has_drift() ? 2 : 0;
  };
}

}  // namespace

CAIRN_COMMAND("drift", "Detect changes made outside Cairn", 50, SetupDrift);

}  // namespace cairn::cli
