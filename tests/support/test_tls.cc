#include "tests/support/test_tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

namespace cairn::testing {
namespace {

std::string TestTlsErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

[[noreturn]] void TestTlsFail(const std::string& what) {
  throw std::runtime_error("test TLS support: " + what + ": " + TestTlsErrors());
}

EVP_PKEY* TestTlsNewKey() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (key == nullptr) TestTlsFail("EC key generation");
  return key;
}

std::string TestTlsPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr || PEM_write_bio_X509(bio, cert) != 1) TestTlsFail("PEM_write_bio_X509");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string TestTlsPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    TestTlsFail("PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

void TestTlsAddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1)
    TestTlsFail("extension " + std::string(value));
  X509_EXTENSION_free(ext);
}

// A certificate for `key`, named `cn`, valid from a day ago for two days;
// the issuer's name is `issuer`'s (itself when null).
X509* TestTlsNewCert(EVP_PKEY* key, const std::string& cn, long serial, X509* issuer) {
  X509* cert = X509_new();
  if (cert == nullptr) TestTlsFail("X509_new");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -24 * 3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("Cairn tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  return cert;
}

}  // namespace

struct TestCa::Keys {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
};

TestCa::TestCa(const std::string& name) : keys_(new Keys) {
  keys_->key = TestTlsNewKey();
  keys_->cert = TestTlsNewCert(keys_->key, name, 1, nullptr);
  TestTlsAddExt(keys_->cert, keys_->cert, NID_basic_constraints, "critical,CA:TRUE");
  TestTlsAddExt(keys_->cert, keys_->cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  TestTlsAddExt(keys_->cert, keys_->cert, NID_subject_key_identifier, "hash");
  if (X509_sign(keys_->cert, keys_->key, EVP_sha256()) == 0) TestTlsFail("signing the CA");
  ca_pem_ = TestTlsPem(keys_->cert);
}

TestCa::~TestCa() {
  X509_free(keys_->cert);
  EVP_PKEY_free(keys_->key);
  delete keys_;
}

TestCertificate TestCa::Issue(long serial, const std::string& common_name) const {
  EVP_PKEY* key = TestTlsNewKey();
  X509* cert = TestTlsNewCert(key, common_name, serial, keys_->cert);
  TestTlsAddExt(cert, keys_->cert, NID_basic_constraints, "critical,CA:FALSE");
  TestTlsAddExt(cert, keys_->cert, NID_key_usage, "critical,digitalSignature");
  TestTlsAddExt(cert, keys_->cert, NID_ext_key_usage, "serverAuth");
  TestTlsAddExt(cert, keys_->cert, NID_subject_alt_name,
                "DNS:localhost,IP:127.0.0.1,IP:0:0:0:0:0:0:0:1");
  TestTlsAddExt(cert, keys_->cert, NID_subject_key_identifier, "hash");
  TestTlsAddExt(cert, keys_->cert, NID_authority_key_identifier, "keyid:always");
  if (X509_sign(cert, keys_->key, EVP_sha256()) == 0) TestTlsFail("signing a certificate");
  TestCertificate out{TestTlsPem(cert), TestTlsPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

std::string EncryptedKeyPem(const std::string& key_pem, const std::string& passphrase) {
  BIO* in = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = in ? PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(in);
  if (key == nullptr) TestTlsFail("reading a key");
  BIO* out = BIO_new(BIO_s_mem());
  if (out == nullptr ||
      PEM_write_bio_PKCS8PrivateKey(out, key, EVP_aes_256_cbc(), passphrase.data(),
                                    static_cast<int>(passphrase.size()), nullptr, nullptr) != 1) {
    TestTlsFail("encrypting a key");
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(out, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(out);
  EVP_PKEY_free(key);
  return pem;
}

TlsProbeResult TlsProbe(int port, int min_version, int max_version) {
  TlsProbeResult r;
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        &SSL_CTX_free);
  if (!ctx) TestTlsFail("SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx.get(), min_version);
  SSL_CTX_set_max_proto_version(ctx.get(), max_version);
  // OpenSSL 3 offers nothing below TLS 1.2 at its default security level:
  // a client that wants to offer 1.0/1.1 lowers it (old clients did not
  // have it).
  if (max_version < TLS1_2_VERSION) SSL_CTX_set_security_level(ctx.get(), 0);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) TestTlsFail("socket");
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    r.error = "connect failed";
    return r;
  }
  SSL* ssl = SSL_new(ctx.get());
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, "localhost");
  if (SSL_connect(ssl) == 1) {
    r.ok = true;
    r.version = SSL_get_version(ssl);
    if (X509* peer = SSL_get1_peer_certificate(ssl)) {
      if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(peer), nullptr)) {
        char* hex = BN_bn2hex(bn);
        r.peer_serial = hex;
        OPENSSL_free(hex);
        BN_free(bn);
      }
      char* subject = X509_NAME_oneline(X509_get_subject_name(peer), nullptr, 0);
      r.peer_subject = subject;
      OPENSSL_free(subject);
      X509_free(peer);
    }
    SSL_shutdown(ssl);
  } else {
    r.error = TestTlsErrors();
    if (r.error.empty()) r.error = "handshake failed (connection closed)";
  }
  SSL_free(ssl);
  close(fd);
  return r;
}

}  // namespace cairn::testing
