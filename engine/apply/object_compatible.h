// AssertObjectCompatible (Terraform's check of the same name): whether what
// the API returned after a create or update is what the plan promised.
//
// The promise is PlannedChange::changes: each field the plan sets, with its
// value where the plan knew it. A field known at plan must come back equal
// (SameFieldValue: a reference field by its canonical ids); one unknown at
// plan (it read what this apply makes) may come back as anything; a field
// the plan does not set (computed, in ignore_changes, unchanged by an
// update) is not looked at. What apply sends is exactly the plan's known
// values, so a difference is the API (or the provider) changing a value it
// was given: apply reports it rather than build on a resource that is not
// what the plan showed.
#pragma once

#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/plan/plan.h"

namespace cairn {

// One `inconsistent_result` error per field of `change` (a create, update
// or replace) whose returned value in `returned` (the resource's attributes
// as the API returned them) is not the planned one, naming the resource,
// the field and both values (any of `sensitive` masked). Empty when
// compatible.
std::vector<Diagnostic> AssertObjectCompatible(const PlannedChange& change, const Value& returned,
                                               const KindCatalog& kinds,
                                               const std::vector<std::string>& sensitive);

}  // namespace cairn
