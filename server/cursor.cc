#include "server/cursor.h"

#include <openssl/evp.h>

#include <charconv>
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

std::string EncodeCursor(int64_t last_seq) {
  return Base64UrlEncode("v1:" + std::to_string(last_seq));
}

std::optional<int64_t> DecodeCursor(std::string_view cursor) {
  auto raw = Base64UrlDecode(cursor);
  if (!raw || raw->size() < 4 || raw->compare(0, 3, "v1:") != 0) return std::nullopt;
  int64_t seq = 0;
  const char* b = raw->data() + 3;
  const char* e = raw->data() + raw->size();
  auto [p, ec] = std::from_chars(b, e, seq);
  if (ec != std::errc() || p != e || seq < 0) return std::nullopt;
  if (EncodeCursor(seq) != cursor) return std::nullopt;  // one spelling per cursor
  return seq;
}

}  // namespace cairn::server
