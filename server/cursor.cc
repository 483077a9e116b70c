#include "server/cursor.h"

#include <openssl/evp.h>

#include <vector>

namespace cairn::server {

std::string Base64UrlEncode(std::string_view bytes) {
  std::vector<unsigned char> out(4 * ((bytes.size() + 2) / 3) + 1);
  int n = EVP_EncodeBlock(out.data(), reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  std::string s;
  s.reserve(n);
  for (int i = 0; i < n; ++i) {
    char c = static_cast<char>(out[i]);
    if (c == '=') break;
    s += c == '+' ? '-' : c == '/' ? '_' : c;
  }
  return s;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.empty() || text.size() > 256 || text.size() % 4 == 1) return std::nullopt;
  std::string std64;
  for (char c : text) {
    if (c == '-') {
      std64 += '+';
    } else if (c == '_') {
      std64 += '/';
    } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      std64 += c;
    } else {
      return std::nullopt;
    }
  }
  size_t pad = (4 - std64.size() % 4) % 4;
  std64.append(pad, '=');
  std::vector<unsigned char> out(std64.size());
  int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(std64.data()),
                          static_cast<int>(std64.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  n -= static_cast<int>(pad);
  return std::string(reinterpret_cast<const char*>(out.data()), n);
}

namespace {
constexpr char kHex[] = "0123456789abcdef";
constexpr size_t kIdBytes = 16;
}  // namespace

std::string EncodeCursor(std::string_view record_id) {
  std::string bytes;
  for (size_t i = 0; i + 1 < record_id.size(); i += 2) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    bytes += static_cast<char>(nibble(record_id[i]) << 4 | nibble(record_id[i + 1]));
  }
  return Base64UrlEncode(bytes);
}

std::optional<std::string> DecodeCursor(std::string_view cursor) {
  auto raw = Base64UrlDecode(cursor);
  if (!raw || raw->size() != kIdBytes) return std::nullopt;
  std::string id;
  for (unsigned char b : *raw) {
    id += kHex[b >> 4];
    id += kHex[b & 0xf];
  }
  if (EncodeCursor(id) != cursor) return std::nullopt;  // one spelling per cursor
  return id;
}

}  // namespace cairn::server
