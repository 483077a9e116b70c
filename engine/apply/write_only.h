// Write-only values in the journal. A create's request is journaled before
// it is sent, body and all, so that a run killed mid-way can send it again
// with the same Idempotency-Key (apply.h, RecoverJournal). A write-only
// field's value (KindInfo::write_only: an instance's user_data, perhaps
// built from an ephemeral variable) must not be kept there: the journaled
// body holds, in its place, a placeholder naming the value by its digest,
// "cairn-write-only:sha256:<hex of the value's JSON>". A recovery puts the
// value back from the manifests (WriteOnlyValues, operations.h); the server
// then sees the very body it saw, and replays or creates as it should.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/value.h"

namespace cairn {

// The placeholder of `v` (a resolved value).
std::string WriteOnlyPlaceholder(const Value& v);

// `body` (the JSON text of a request) with every member equal to one of
// `values` replaced by that value's placeholder; `body` unchanged when it
// is not JSON.
std::string SealWriteOnly(const std::string& body, const std::vector<Value>& values);

// Whether `body` (journaled) holds a placeholder.
bool HoldsWriteOnlyPlaceholder(const std::string& body);

// `body` with each placeholder replaced by its value in `known`
// (placeholder -> value); each placeholder not in `known` is appended to
// `missing` and left as it is.
std::string UnsealWriteOnly(const std::string& body, const std::map<std::string, Value>& known,
                            std::vector<std::string>& missing);

}  // namespace cairn
