// TLS for `cairn serve` (--tls-cert, --tls-key): the server's OpenSSL
// context, built from a PEM certificate chain and its PEM private key.
//
// Protocols: TLS 1.2 and 1.3 only (SSLv3, TLS 1.0 and 1.1 are refused at
// the handshake). Ciphers: for TLS 1.2 only forward-secret AEAD suites
// (ECDHE with AES-GCM or ChaCha20-Poly1305, Mozilla's "intermediate"
// list); TLS 1.3 keeps OpenSSL's suites, all AEAD. No compression, no
// renegotiation. A key protected by a passphrase is refused (no prompt: a
// server may have no terminal).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "base/status.h"

namespace cairn::server {

struct TlsContext {
  std::shared_ptr<boost::asio::ssl::context> context;
  // "subject CN=..., serial 0A1B..., expires 2027-01-01" (for the log).
  std::string description;
};

// Reads both files and checks that the key is the certificate's. Every
// error names the file it is about (unreadable, not PEM, a key that does
// not match the certificate, a passphrase-protected key).
Result<TlsContext> LoadServerTlsContext(const std::string& cert_file, const std::string& key_file);

}  // namespace cairn::server
