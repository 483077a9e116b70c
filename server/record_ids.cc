#include "server/record_ids.h"

#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <stdexcept>

namespace cairn::server {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string RandomHex(bool uuid_v4) {
  std::array<unsigned char, 16> b{};
  if (RAND_bytes(b.data(), b.size()) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed");
  if (uuid_v4) {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
  }
  std::string out;
  out.reserve(32);
  for (unsigned char c : b) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::string NewResourceHex() { return RandomHex(true); }
std::string NewRequestId() { return RandomHex(false); }

std::string HexToUuid(std::string_view h) {
  std::string out;
  out.reserve(36);
  out.append(h.substr(0, 8)).append("-").append(h.substr(8, 4)).append("-");
  out.append(h.substr(12, 4)).append("-").append(h.substr(16, 4)).append("-");
  out.append(h.substr(20, 12));
  return out;
}

std::optional<std::string> ParseResourceId(std::string_view text, std::string_view prefix) {
  std::string hex;
  if (text.size() == 36 && text[8] == '-') {
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash) {
        if (c != '-') return std::nullopt;
        continue;
      }
      if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
      if (!IsLowerHex(c)) return std::nullopt;
      hex += c;
    }
    return hex;
  }
  if (prefix.empty() || text.size() != prefix.size() + 1 + 32) return std::nullopt;
  if (text.substr(0, prefix.size()) != prefix || text[prefix.size()] != '_') return std::nullopt;
  for (char c : text.substr(prefix.size() + 1)) {
    if (!IsLowerHex(c)) return std::nullopt;
    hex += c;
  }
  return hex;
}

bool IsSaneRequestId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace cairn::server
