// Test-only TLS support, through OpenSSL's C API (no openssl command):
// a throwaway certificate authority that issues server certificates for
// 127.0.0.1, ::1 and localhost, and a bare TLS client that reports how a
// handshake went (the protocol versions it offers chosen by the test).
#pragma once

#include <string>

namespace cairn::testing {

struct TestCertificate {
  std::string cert_pem;  // the certificate alone (the CA signs it directly)
  std::string key_pem;   // its private key, unencrypted PKCS#8
};

// A CA of its own (an EC P-256 key, self-signed, valid a day either side
// of now). Each one is new: a client trusting one trusts nothing else.
class TestCa {
 public:
  explicit TestCa(const std::string& name = "Cairn Test CA");
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::string& ca_pem() const { return ca_pem_; }
  // A server certificate, serial `serial`, for DNS localhost, IP 127.0.0.1
  // and IP ::1, usable for serverAuth.
  TestCertificate Issue(long serial, const std::string& common_name = "localhost") const;

 private:
  struct Keys;
  Keys* keys_;
  std::string ca_pem_;
};

// `key_pem` again, encrypted with `passphrase` (AES-256-CBC, PKCS#8).
std::string EncryptedKeyPem(const std::string& key_pem, const std::string& passphrase);

struct TlsProbeResult {
  bool ok = false;           // the handshake completed
  std::string error;         // OpenSSL's reason when not
  std::string version;       // "TLSv1.3", ... when it did
  std::string peer_serial;   // the server certificate's serial, hex (BN_bn2hex)
  std::string peer_subject;  // its subject, one line
};

// Connects to 127.0.0.1:`port` and shakes hands offering exactly
// `min_version`..`max_version` (TLS1_VERSION, TLS1_1_VERSION, ...; for
// versions below 1.2 the client lowers its own security level so that it
// really offers them). No certificate verification: the probe only looks
// at what the server presents. Never hangs: 10 s socket timeouts.
TlsProbeResult TlsProbe(int port, int min_version, int max_version);

}  // namespace cairn::testing
