#include "server/token.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace cairn::server {

std::string GenerateToken() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), bytes.size()) != 1) {
    // No entropy means no safe token: refusing is the only correct answer.
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  }
  std::array<unsigned char, 48> b64{};
  int n = EVP_EncodeBlock(b64.data(), bytes.data(), bytes.size());
  std::string token = "cairn_";
  for (int i = 0; i < n; ++i) {
    char c = static_cast<char>(b64[i]);
    if (c == '=') break;
    token += (c == '+') ? '-' : (c == '/') ? '_' : c;
  }
  return token;
}

const char* TokenScopeName(TokenScope scope) {
  return scope == TokenScope::kRead ? "read" : "write";
}

std::string TokenId(std::string_view sha256_hex) { return std::string(sha256_hex.substr(0, 12)); }

}  // namespace cairn::server
