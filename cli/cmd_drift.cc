// cairn drift: the live API against what Cairn last applied.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/engine_session.h"
#include "engine/drift/drift.h"
#include "engine/redact.h"

namespace cairn::cli {
namespace {

std::function<int()> SetupDrift(CLI::App& sub, const GlobalOptions& global) {
  struct Flags {
    StackFlags stack;
    bool json = false, unmanaged = false;
  };
  auto f = std::make_shared<Flags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json, "Print the report as JSON");
  sub.add_flag("--unmanaged", f->unmanaged,
               "Also list live resources of the managed kinds that no state tracks");
  sub.footer(
      "Compares the live resources with the state (what was last applied): fields changed\n"
      "outside Cairn and resources deleted outside Cairn. Exit 0 no drift, 2 drift, 1 error.\n\n"
      "Example:\n  cairn drift examples/quickstart --unmanaged");
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
    RefreshResult refresh = Refresh(*state, session->provider(), ro);
    if (!refresh.ok()) {
      session->PrintDiagnostics(refresh.diagnostics);
      return 1;
    }
    DriftReport report =
        DetectDrift(*state, refresh, session->kinds(), f->unmanaged, session->canonical_id());
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
