// Private key material detection. Manifests, and files they read with
// file(), must never carry a private key: the API accepts public keys only,
// and a key in a repository is a leak. Detection is textual: a PEM/OpenSSH
// "-----BEGIN ... PRIVATE KEY-----" armour line or a PuTTY key file header.
// Callers report the position and never echo the key.
#pragma once

#include <string>
#include <string_view>

namespace cairn {

struct PrivateKeyMatch {
  int line = 0;    // 1-based; 0 when nothing was found
  int column = 0;  // 1-based column of the marker
  int length = 1;  // width of the marker
  bool found() const { return line > 0; }
};

// The first private key marker in `text`.
PrivateKeyMatch FindPrivateKey(std::string_view text);

// `text` with each private key block (armour lines included) reduced to its
// BEGIN marker followed by "[REDACTED]" lines, so showing a line of it for a
// caret can never print key material.
std::string RedactPrivateKeys(std::string_view text);

}  // namespace cairn
