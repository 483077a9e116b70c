// Idempotency keys (spec 4.3). A key is scoped to (project, method, request
// path); the path includes the resource id, so the same key on two
// resources, two methods or two projects never collides. A request's
// identity is the SHA-256 of its canonical JSON body: parsed and dumped
// again, so key order and whitespace do not matter. Stored responses live
// in the store's idempotency table (written in the same transaction as the
// mutation); keys whose first request is still executing are claimed in the
// store (ApiStore::ClaimKey), so that servers sharing one store see them too.
#pragma once

#include <string>
#include <string_view>

namespace cairn::server {

inline constexpr size_t kMaxIdempotencyKeyLength = 255;

// 1..255 printable ASCII characters (0x21-0x7e).
bool IsValidIdempotencyKey(std::string_view key);

std::string IdempotencyScope(std::string_view project, std::string_view method,
                             std::string_view path, std::string_view key);

}  // namespace cairn::server
