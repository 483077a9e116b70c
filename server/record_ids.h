// Resource identifiers. Every record has one 128-bit random id (OpenSSL's
// CSPRNG, RFC 4122 version 4 bits set), stored as 32 lowercase hex digits.
// The control-plane API shows it as a hyphenated UUID (publicId); the preview
// API shows it as "<prefix>_" + the 32 hex digits. Both forms are accepted
// wherever a request names a resource.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cairn::server {

// 32 lowercase hex digits of a fresh version-4 UUID.
std::string NewResourceHex();

// "0123...ef" (32 hex) -> "01234567-89ab-cdef-0123-456789abcdef".
std::string HexToUuid(std::string_view hex32);

// Accepts "<prefix>_<32 hex>" (when `prefix` is not empty and matches) or a
// hyphenated UUID in either case; returns the 32 lowercase hex digits, or
// nullopt when `text` is neither.
std::optional<std::string> ParseResourceId(std::string_view text, std::string_view prefix);

// A request id: 32 lowercase hex digits from the CSPRNG.
std::string NewRequestId();

// True for a client-sent X-Request-ID worth echoing: 1..128 characters of
// [A-Za-z0-9._-].
bool IsSaneRequestId(std::string_view id);

}  // namespace cairn::server
