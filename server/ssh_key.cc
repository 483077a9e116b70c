#include "server/ssh_key.h"

#include <openssl/sha.h>

#include <array>

#include "base/schema/formats.h"
#include "server/cursor.h"

namespace cairn::server {

// The parsing is the schema format's (base/schema/formats.h), so the
// server accepts exactly the lines `cairn validate` accepts.
Result<SshPublicKey> ParseSshPublicKey(std::string_view line) {
  OpenSshPublicKey parts;
  if (auto problem = ParseOpenSshPublicKey(line, &parts)) {
    return Status::InvalidArgument(problem->Precise());
  }
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(parts.blob.data()), parts.blob.size(),
         digest.data());
  std::string b64url = Base64UrlEncode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  // ssh-keygen prints standard base64 (+ and /), unpadded.
  for (char& c : b64url) c = c == '-' ? '+' : c == '_' ? '/' : c;
  SshPublicKey key;
  key.type = parts.type;
  key.line = parts.type + " " + parts.base64;
  if (!parts.comment.empty()) key.line += " " + parts.comment;
  key.fingerprint = "SHA256:" + b64url;
  return key;
}

}  // namespace cairn::server
