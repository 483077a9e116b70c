// Refresh: reads the live state of everything the state tracks, with the
// list endpoints (paginated, one listing per kind, kinds in parallel) rather
// than one GET per resource. A tracked resource missing from its listing is
// confirmed with one GET before it is called gone, so a resource created
// between pages is never mistaken for a deletion.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

struct RefreshResult {
  LiveView live;  // by state address
  // Every object listed, by kind; the attributes of those the state tracks
  // are moved to `live` (null here).
  std::map<std::string, std::vector<RemoteResource>> listed;
  int requests = 0;  // HTTP requests made
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics); }
};

struct RefreshOptions {
  std::set<std::string> extra_kinds;  // also list these (drift --unmanaged)
  std::stop_token stop;
};

// Listed objects are matched to the state's by canonical id (CanonicalId
// with `kinds`).
RefreshResult Refresh(const StateSnapshot& state, Provider& provider, const KindCatalog& kinds,
                      const RefreshOptions& options);

}  // namespace cairn
