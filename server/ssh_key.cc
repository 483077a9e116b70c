#include "server/ssh_key.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <vector>

#include "server/cursor.h"

namespace cairn::server {
namespace {

constexpr std::string_view kTypes[] = {"ssh-ed25519",
                                       "ssh-rsa",
                                       "ecdsa-sha2-nistp256",
                                       "ecdsa-sha2-nistp384",
                                       "ecdsa-sha2-nistp521",
                                       "sk-ssh-ed25519@openssh.com",
                                       "sk-ecdsa-sha2-nistp256@openssh.com"};

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '=';
}

}  // namespace

Result<SshPublicKey> ParseSshPublicKey(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos) {
    return Status::InvalidArgument("must be a single OpenSSH public key line");
  }
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos) {
    return Status::InvalidArgument("must be an OpenSSH public key line: TYPE BASE64 [COMMENT]");
  }
  std::string_view type = line.substr(0, sp);
  bool known = false;
  for (auto t : kTypes) known = known || t == type;
  if (!known) {
    return Status::InvalidArgument("unsupported key type '" + std::string(type.substr(0, 64)) +
                                   "' (ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521, sk-*)");
  }
  std::string_view rest = line.substr(sp + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t sp2 = rest.find(' ');
  std::string_view b64 = rest.substr(0, sp2);
  std::string_view comment =
      sp2 == std::string_view::npos ? std::string_view() : rest.substr(sp2 + 1);
  if (b64.empty() || b64.size() % 4 != 0 || b64.size() > 16384) {
    return Status::InvalidArgument("key data is not valid base64");
  }
  for (char c : b64) {
    if (!IsBase64Char(c)) return Status::InvalidArgument("key data is not valid base64");
  }
  std::vector<unsigned char> blob(b64.size());
  int n = EVP_DecodeBlock(blob.data(), reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return Status::InvalidArgument("key data is not valid base64");
  size_t pad = 0;
  for (size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) ++pad;
  if (pad > 2) return Status::InvalidArgument("key data is not valid base64");
  size_t len = static_cast<size_t>(n) - pad;
  if (len < 4) return Status::InvalidArgument("key data is too short");
  uint32_t tlen = (uint32_t(blob[0]) << 24) | (uint32_t(blob[1]) << 16) | (uint32_t(blob[2]) << 8) |
                  uint32_t(blob[3]);
  if (tlen > len - 4 ||
      std::string_view(reinterpret_cast<const char*>(blob.data()) + 4, tlen) != type) {
    return Status::InvalidArgument("key data does not match key type '" + std::string(type) + "'");
  }
  if (len - 4 - tlen < 16) return Status::InvalidArgument("key data is too short");
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(blob.data(), len, digest.data());
  std::string b64url = Base64UrlEncode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  // ssh-keygen prints standard base64 (+ and /), unpadded.
  for (char& c : b64url) c = c == '-' ? '+' : c == '_' ? '/' : c;
  SshPublicKey key;
  key.type = std::string(type);
  key.line = std::string(type) + " " + std::string(b64);
  if (!comment.empty()) key.line += " " + std::string(comment);
  key.fingerprint = "SHA256:" + b64url;
  return key;
}

bool ContainsPrivateKeyMaterial(std::string_view text) {
  if (text.find("PuTTY-User-Key-File") != std::string_view::npos) return true;
  size_t pos = 0;
  while ((pos = text.find("-----BEGIN", pos)) != std::string_view::npos) {
    size_t end = text.find("-----", pos + 10);
    if (end == std::string_view::npos) return false;
    std::string_view label = text.substr(pos + 10, end - pos - 10);
    if (label.find("PRIVATE KEY") != std::string_view::npos) return true;
    pos = end;
  }
  return false;
}

}  // namespace cairn::server
