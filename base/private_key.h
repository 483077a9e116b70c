// Private key material detection, the one rule of the loader (manifests and
// files they read), the provider (nothing leaves with a key in it) and the
// server (nothing is accepted with one): the API takes public keys only, and
// a key in a repository is a leak. Detection is textual: an armour line
// "-----BEGIN<label>-----" whose label holds "PRIVATE KEY" (PEM, OpenSSH,
// PKCS#8, encrypted or not, with or without the space), or a PuTTY key file
// header ("PuTTY-User-Key-File"). Callers report the position and never
// echo the key.
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

// Whether `text` holds private key material anywhere.
inline bool ContainsPrivateKeyMaterial(std::string_view text) {
  return FindPrivateKey(text).found();
}

// `text` with each private key block (armour lines included) reduced to its
// BEGIN marker followed by "[REDACTED]" lines, so showing a line of it for a
// caret can never print key material.
std::string RedactPrivateKeys(std::string_view text);

}  // namespace cairn
