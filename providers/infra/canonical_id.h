// Resource identifiers as the two APIs spell them. An instance or a network is
// one record seen through both views (docs/api.md, "Identifiers"): the preview
// API calls it `inst_<32 hex>` / `net_<32 hex>`, the control-plane API calls it
// by its `publicId`, a lowercase hyphenated UUID, and the 32 hex digits are
// that UUID without its hyphens. Either form may appear wherever one resource
// refers to another, so the engine compares references only after mapping
// both sides through CanonicalId().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/identifiers.h"  // IsUuid

namespace cairn {

// The canonical form of an id: `inst_`/`net_` ids and UUIDs (any case) become
// the lowercase hyphenated UUID; anything else (`key_...`, `fw_...`, names,
// malformed ids) is returned unchanged. Idempotent:
// CanonicalId(CanonicalId(x)) == CanonicalId(x). Thread-safe (pure).
std::string CanonicalId(std::string_view id);

// `text` (an API's error message) with every `inst_`/`net_` id in it, as a
// whole word, in its canonical form: the form the engine's state records,
// so that a message names an object as `cairn state list` does.
std::string CanonicalIdsIn(std::string_view text);

// The preview API's id prefixes, `inst_` and `net_`: the kinds' x-cairn.id_alias
// values in schemas/ (a test keeps the two lists equal).
const std::vector<std::string>& PreviewPrefixes();

// True when `id` is safe to put in a URL path segment as is: non-empty, at
// most 200 characters of [A-Za-z0-9._~-] (RFC 3986 unreserved), and not
// "." or "..". Ids from the API always are; anything else is refused rather
// than escaped, so a corrupted state entry can never address another route.
bool IsSafePathId(std::string_view id);

}  // namespace cairn
