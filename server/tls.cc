#include "server/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace cairn::server {

namespace {

// Mozilla's "intermediate" TLS 1.2 suites: forward secret, AEAD only.
constexpr const char* kTlsCiphers12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// OpenSSL's queued errors as one line ("" when none), and the queue emptied.
std::string TlsOpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

std::string TlsWithReason(const std::string& message) {
  std::string why = TlsOpenSslErrors();
  return why.empty() ? message : message + " (" + why + ")";
}

Result<std::string> TlsReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IOError(std::string(flag) + ": cannot read " + path + ": " +
                           std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError(std::string(flag) + ": cannot read " + path);
  return text.str();
}

struct TlsBioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct TlsX509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct TlsKeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using TlsBio = std::unique_ptr<BIO, TlsBioFree>;
using TlsX509 = std::unique_ptr<X509, TlsX509Free>;
using TlsKey = std::unique_ptr<EVP_PKEY, TlsKeyFree>;

TlsBio TlsMemory(const std::string& text) {
  return TlsBio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Never asks for a passphrase (OpenSSL's default prompts on the terminal).
int TlsNoPassphrase(char*, int, int, void*) { return 0; }

std::string TlsTime(const ASN1_TIME* t) {
  tm out{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &out) != 1) return "?";
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &out);
  return buf;
}

std::string TlsDescribe(X509* cert) {
  std::string subject = "?";
  if (char* s = X509_NAME_oneline(X509_get_subject_name(cert), nullptr, 0)) {
    subject = s;
    OPENSSL_free(s);
  }
  std::string serial = "?";
  if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(bn)) {
      serial = hex;
      OPENSSL_free(hex);
    }
    BN_free(bn);
  }
  return "subject " + subject + ", serial " + serial + ", expires " +
         TlsTime(X509_get0_notAfter(cert));
}

}  // namespace

Result<TlsContext> LoadServerTlsContext(const std::string& cert_file, const std::string& key_file) {
  ERR_clear_error();
  auto cert_text = TlsReadFile(cert_file, "--tls-cert");
  if (!cert_text.ok()) return cert_text.status();
  auto key_text = TlsReadFile(key_file, "--tls-key");
  if (!key_text.ok()) return key_text.status();

  // The certificate first, then any intermediates of its chain.
  TlsBio cert_bio = TlsMemory(*cert_text);
  TlsX509 leaf(cert_bio ? PEM_read_bio_X509_AUX(cert_bio.get(), nullptr, TlsNoPassphrase, nullptr)
                        : nullptr);
  if (!leaf) {
    return Status::InvalidArgument(
        TlsWithReason("--tls-cert: " + cert_file + " holds no PEM certificate"));
  }
  std::vector<TlsX509> chain;
  while (X509* more = PEM_read_bio_X509(cert_bio.get(), nullptr, TlsNoPassphrase, nullptr)) {
    chain.emplace_back(more);
  }
  ERR_clear_error();  // the end of the file reads as "no start line"

  TlsBio key_bio = TlsMemory(*key_text);
  TlsKey key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, TlsNoPassphrase, nullptr)
                     : nullptr);
  if (!key) {
    if (key_text->find("ENCRYPTED") != std::string::npos) {
      ERR_clear_error();
      return Status::InvalidArgument(
          "--tls-key: " + key_file +
          " is protected by a passphrase, which cairn serve cannot ask for: give it the key "
          "without one (e.g. `openssl pkey -in " +
          key_file + " -out plain.key`, readable only by the server's user)");
    }
    return Status::InvalidArgument(
        TlsWithReason("--tls-key: " + key_file + " holds no PEM private key"));
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("--tls-key: " + key_file +
                                   " is not the private key of the certificate in " + cert_file +
                                   " (" + TlsDescribe(leaf.get()) + ")");
  }

  namespace ssl = boost::asio::ssl;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_default_passwd_cb(native, TlsNoPassphrase);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::no_compression | ssl::context::single_dh_use);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
  bool ok = SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) == 1 &&
            SSL_CTX_set_cipher_list(native, kTlsCiphers12) == 1 &&
            SSL_CTX_use_certificate(native, leaf.get()) == 1 &&
            SSL_CTX_use_PrivateKey(native, key.get()) == 1;
  for (auto& c : chain) ok = ok && SSL_CTX_add1_chain_cert(native, c.get()) == 1;
  ok = ok && SSL_CTX_check_private_key(native) == 1;
  if (!ok) {
    return Status::InvalidArgument(TlsWithReason("--tls-cert " + cert_file + " --tls-key " +
                                                 key_file + ": OpenSSL refused them"));
  }
  TlsContext out;
  out.context = std::move(ctx);
  out.description = TlsDescribe(leaf.get());
  if (X509_cmp_current_time(X509_get0_notAfter(leaf.get())) < 0) {
    spdlog::warn("--tls-cert: {} has expired ({}): clients will refuse it", cert_file,
                 out.description);
  }
  return out;
}

}  // namespace cairn::server
