// API tokens of `cairn serve`. A token is "cairn_" followed by 43 base64url
// characters (32 bytes from OpenSSL's CSPRNG); the server stores only the
// lowercase hex SHA-256 of a token, never the token itself.
#pragma once

#include <string>
#include <string_view>

#include "base/digest.h"

namespace cairn::server {

// Lowercase hex SHA-256 of `data` (base/digest.h).
using cairn::Sha256Hex;

// A fresh random token of the shape above.
std::string GenerateToken();

// What a token may do: everything its project allows (write, the default),
// or only read (GET and HEAD): a CI job that only plans holds no credential
// that can change anything.
enum class TokenScope { kWrite, kRead };

// One accepted token: its project, the SHA-256 hex of the token, its scope.
struct TokenGrant {
  std::string project;
  std::string sha256;
  TokenScope scope = TokenScope::kWrite;
};

// "write" or "read", as the tokens file spells them.
const char* TokenScopeName(TokenScope scope);

// How logs name a token: the first 12 hex digits of its hash, which say
// which line of the tokens file it is and nothing of the token.
std::string TokenId(std::string_view sha256_hex);

}  // namespace cairn::server
