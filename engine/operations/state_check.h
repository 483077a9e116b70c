// Checks of a state as a whole: what plan, apply and destroy take for
// granted of it, checked where a state comes from outside (`cairn state
// push`) and where a command gives a resource a new address (`cairn
// import`, `cairn state mv`). A state Cairn wrote itself passes them.
//
// CheckState reports one diagnostic per problem:
//   invalid_state_address  an address that is not the state's spelling of one
//   unknown_kind           a kind this Cairn does not know
//   invalid_id             an id that is not one (empty, or what the provider
//                          would refuse to put in a request path)
//   unknown_depends_on     a depends_on entry naming no resource of the state
//   dependency_cycle       depends_on entries leading back to where they start
//                          (destroy orders deletes by them), the path named
//   duplicate_id           one remote object tracked at two addresses (apply
//                          would manage it twice), naming the first
// each located at the resource's address where the caller knows it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/plan/plan.h"
#include "engine/state/state_store.h"

namespace cairn {

struct StateCheckOptions {
  // The kinds this Cairn knows (empty: any), and how their ids are spelled:
  // two spellings of one id (inst_<hex> and its UUID) are one object.
  KindCatalog kinds;
  // True for an id the provider can act on (providers/infra: IsSafePathId);
  // unset: any non-empty id.
  std::function<bool(const std::string& id)> is_id;
  // Where each address is written (PulledState::locations).
  std::map<std::string, SourceLocation> locations;
};

std::vector<Diagnostic> CheckState(const StateSnapshot& state, const StateCheckOptions& options);

// The addresses of `added` (in `state`) whose remote object `state` also
// tracks at another address: a duplicate_id diagnostic each, naming where it
// is tracked already. For the addresses a command is about to give objects.
std::vector<Diagnostic> CheckTrackedOnce(const StateSnapshot& state,
                                         const std::vector<std::string>& added,
                                         const StateCheckOptions& options);

}  // namespace cairn
