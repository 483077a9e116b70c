// Moving resources to new addresses in the state, without touching the API:
// `cairn state mv` and the manifests' `kind: moved` documents share it.
//
// A move names FROM and TO addresses of one kind. FROM itself moves and,
// when FROM has no index, so does every instance of it (FROM[0],
// FROM["k"]), each to the same index under TO. Whatever recorded a
// dependency on a moved address then names its new one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/address.h"
#include "engine/state/state_store.h"

namespace cairn {

// {from, to} address texts.
using AddressMoves = std::vector<std::pair<std::string, std::string>>;

struct MovePlan {
  AddressMoves moves;  // in address order
  std::string error;   // empty when the move is well formed
};

// What moving `from` to `to` moves in `state`. An error when nothing is at
// `from`, or when whole instances would move under an index.
MovePlan PlanMove(const StateSnapshot& state, const ResourceAddress& from,
                  const ResourceAddress& to);

// What moving the module instances `from` to `to` moves in `state`: every
// resource recorded under `from`, its nested modules' too, to the same
// place under `to`. `from` without an index on its last step (module.a)
// takes every instance of that call, each to the same index under `to`
// (module.a[0] to module.b[0]); its other steps match exactly. An error
// when nothing is under `from`, or when whole instances would move under
// an index (module.a[0] to module.b[1][0] is no address).
MovePlan PlanModuleMove(const StateSnapshot& state, const std::vector<ModuleStep>& from,
                        const std::vector<ModuleStep>& to);

// Moves made one after another (a -> b, then b -> c) as one move each from
// where the state records the resource (a -> c), in the order first seen.
AddressMoves NetMoves(const AddressMoves& moves);

// The state with `moves` made (addresses and recorded dependencies).
StateSnapshot ApplyMoves(const StateSnapshot& state, const AddressMoves& moves);

// The one commit that makes `moves` in `state`: the renames, and a put of
// every resource whose recorded dependencies name a moved address.
StateCommit MoveCommit(const StateSnapshot& state, const AddressMoves& moves);

}  // namespace cairn
