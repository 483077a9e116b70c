#include "engine/schema/formats.h"

#include <arpa/inet.h>
#include <openssl/evp.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <vector>

namespace cairn {
namespace {

constexpr std::array<std::string_view, 8> kSshKeyTypes = {
    "ssh-rsa",
    "ssh-ed25519",
    "ssh-dss",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '=';
}

}  // namespace

bool IsCidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 >= text.size()) return false;
  std::string addr(text.substr(0, slash));
  std::string_view bits = text.substr(slash + 1);
  int prefix = -1;
  auto [ptr, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
  if (ec != std::errc() || ptr != bits.data() + bits.size() || bits.size() > 3) return false;
  unsigned char buf[16];
  if (inet_pton(AF_INET, addr.c_str(), buf) == 1) return prefix >= 0 && prefix <= 32;
  if (inet_pton(AF_INET6, addr.c_str(), buf) == 1) return prefix >= 0 && prefix <= 128;
  return false;
}

bool IsOpenSshPublicKey(std::string_view text) {
  // A trailing newline is tolerated (file() strips it, but be lenient).
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.find('\n') != std::string_view::npos) return false;
  size_t sp = text.find(' ');
  if (sp == std::string_view::npos) return false;
  std::string_view type = text.substr(0, sp);
  bool known = false;
  for (auto t : kSshKeyTypes) known = known || t == type;
  if (!known) return false;
  std::string_view rest = text.substr(sp + 1);
  size_t end = rest.find(' ');
  std::string_view blob = rest.substr(0, end);
  if (blob.size() < 16 || blob.size() % 4 != 0 || blob.size() > 16384) return false;
  for (char c : blob) {
    if (!IsBase64Char(c)) return false;
  }
  std::vector<unsigned char> out(blob.size() / 4 * 3 + 1);
  int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(blob.data()),
                          static_cast<int>(blob.size()));
  if (n < 4) return false;
  // The blob starts with the key type again, as an SSH string (uint32 length + bytes).
  uint32_t len = (uint32_t{out[0]} << 24) | (uint32_t{out[1]} << 16) | (uint32_t{out[2]} << 8) |
                 uint32_t{out[3]};
  if (len != type.size() || 4 + len > static_cast<uint32_t>(n)) return false;
  return std::string_view(reinterpret_cast<const char*>(out.data()) + 4, len) == type;
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

bool IsCustomFormat(std::string_view format) {
  return format == "cidr" || format == "openssh-public-key";
}

std::optional<std::string> CheckFormat(std::string_view format, std::string_view text) {
  if (format == "cidr") {
    if (IsCidr(text)) return std::nullopt;
    return "a CIDR block such as 10.0.0.0/16";
  }
  if (format == "openssh-public-key") {
    if (IsOpenSshPublicKey(text)) return std::nullopt;
    return "an OpenSSH public key line such as \"ssh-ed25519 AAAAC3Nza... user@host\"";
  }
  return std::nullopt;
}

}  // namespace cairn
