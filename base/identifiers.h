// Resource identifiers that one record can be spelled with in two ways. The
// API's preview routes call an instance `inst_<32 hex>` and a network
// `net_<32 hex>`; its control-plane routes call the same record by a
// lowercase hyphenated UUID whose 32 hex digits are those (docs/api.md,
// "Identifiers"). A kind declares its preview prefix in its schema
// (x-cairn.id_alias, base/schema/schema_registry.h); ids are compared only
// after both sides are mapped to their canonical form here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// True for 8-4-4-4-12 hex digits (any case).
bool IsUuid(std::string_view text);

// The canonical form of `id`: a UUID (any case) becomes lowercase, and
// `<alias><32 hex>` for any of `aliases` becomes the lowercase hyphenated
// UUID of those digits; anything else is returned unchanged. Idempotent and
// pure (thread-safe).
std::string CanonicalIdWith(std::string_view id, const std::vector<std::string>& aliases);

}  // namespace cairn
