// OpenSSH public key lines ("TYPE BASE64 [COMMENT]") as accepted by
// POST /v1/ssh_keys, and detection of private key material, which the server
// refuses anywhere in a request body (spec 2.6).
#pragma once

#include <string>
#include <string_view>

#include "base/private_key.h"
#include "base/status.h"

namespace cairn::server {

struct SshPublicKey {
  std::string type;         // e.g. "ssh-ed25519"
  std::string line;         // normalised "TYPE BASE64[ COMMENT]"
  std::string fingerprint;  // "SHA256:" + unpadded base64 of SHA-256(blob), like ssh-keygen -l
};

// The key type must be ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521,
// sk-ssh-ed25519@openssh.com or sk-ecdsa-sha2-nistp256@openssh.com; the
// blob must be valid base64 whose first length-prefixed string equals the
// type. Errors are InvalidArgument with a message fit for a client.
Result<SshPublicKey> ParseSshPublicKey(std::string_view line);

// Private key material: the engine's one detector (base/private_key.h).
using ::cairn::ContainsPrivateKeyMaterial;

}  // namespace cairn::server
