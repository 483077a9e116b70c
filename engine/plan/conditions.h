// Deciding a condition (a precondition, a postcondition, an output's
// precondition, a check's assertion: ConditionConfig) with the values known
// at that point: at plan, with the planned attributes; during apply, with
// what the resources it reads have become. One evaluator for both.
#pragma once

#include <string>
#include <vector>

#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/manifest/expr.h"

namespace cairn {

struct ConditionVerdict {
  enum class Kind {
    kHolds,
    kFails,    // false: `message` is its error message
    kUnknown,  // reads a value not known yet
    kInvalid,  // neither true nor false: `message` says what it is
  };
  Kind kind = Kind::kHolds;
  std::string message;
};

// `self` (a postcondition's resource) when not null. Every string of
// `secrets` (the values of sensitive variables) found in the message is
// replaced by "(sensitive value)".
ConditionVerdict DecideCondition(const ConditionConfig& c, const AttributeLookup& lookup,
                                 const Value* self, const std::vector<std::string>& secrets);

// `text` with every one of `secrets` (the values of sensitive variables) in
// it replaced by "(sensitive value)".
std::string MaskSecrets(std::string text, const std::vector<std::string>& secrets);

}  // namespace cairn
