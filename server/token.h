// API tokens of `cairn serve`. A token is "cairn_" followed by 43 base64url
// characters (32 bytes from OpenSSL's CSPRNG); the server stores only the
// lowercase hex SHA-256 of a token, never the token itself.
#pragma once

#include <string>
#include <string_view>

namespace cairn::server {

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// A fresh random token of the shape above.
std::string GenerateToken();

}  // namespace cairn::server
