#include "engine/state/state_cipher.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "base/env.h"

namespace cairn {
namespace {

constexpr std::string_view kCipherPrefix = "cairn-enc1:";
constexpr size_t kCipherKeyBytes = 32;
constexpr size_t kCipherNonceBytes = 12;
constexpr size_t kCipherTagBytes = 16;
constexpr size_t kCipherSaltBytes = 16;
constexpr size_t kCipherKeyIdHex = 16;
constexpr int kCipherPbkdf2Iterations = 600'000;
constexpr size_t kCipherMinPassphrase = 16;
constexpr int64_t kCipherMaxKeyFileBytes = 64 * 1024;
constexpr std::string_view kCipherHkdfInfo = "cairn state encryption v1";

std::string CipherHex(const unsigned char* p, size_t n) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

bool CipherIsHexKey(std::string_view s) {
  if (s.size() != kCipherKeyBytes * 2) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string CipherUnhex(std::string_view s) {
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    return (std::tolower(static_cast<unsigned char>(c)) - 'a') + 10;
  };
  std::string out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    out.push_back(static_cast<char>(nib(s[i]) * 16 + nib(s[i + 1])));
  }
  return out;
}

// Wipes a string's bytes before it is freed.
struct CipherWipe {
  std::string& s;
  ~CipherWipe() { OPENSSL_cleanse(s.data(), s.size()); }
};

Result<std::string> CipherReadMaterial(const StateKeySource& src, const std::string& stack_root) {
  std::string material;
  if (!src.env.empty()) {
    const char* v = std::getenv(src.env.c_str());
    if (v == nullptr || *v == '\0') {
      return Status::InvalidArgument("state encryption: environment variable " + src.env +
                                     " is not set; it must hold the state's key");
    }
    material = v;
  } else if (!src.file.empty()) {
    std::filesystem::path p(src.file);
    if (p.is_relative() && !stack_root.empty()) p = std::filesystem::path(stack_root) / p;
    Result<std::string> text = PosixEnv().ReadFile(p.string(), kCipherMaxKeyFileBytes);
    if (!text.ok()) {
      return Status::InvalidArgument("state encryption: cannot read the key file " + p.string() +
                                     ": " + text.status().message());
    }
    material = std::move(*text);
    while (!material.empty() && (material.back() == '\n' || material.back() == '\r')) {
      material.pop_back();
    }
    if (material.empty()) {
      return Status::InvalidArgument("state encryption: the key file " + p.string() + " is empty");
    }
  } else {
    return Status::InvalidArgument("state encryption: a key needs key_env or key_file");
  }
  return material;
}

// The record key of `material` with `salt`.
Result<std::string> CipherDerive(const std::string& material, const std::string& salt,
                                 const std::string& source) {
  std::string key(kCipherKeyBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(key.data());
  if (CipherIsHexKey(material)) {
    std::string ikm = CipherUnhex(material);
    CipherWipe wipe{ikm};
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* ctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
    EVP_KDF_free(kdf);
    if (ctx == nullptr) return Status::Internal("state encryption: OpenSSL has no HKDF");
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm.data(), ikm.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                          salt.size()),
        OSSL_PARAM_construct_octet_string(
            OSSL_KDF_PARAM_INFO, const_cast<char*>(kCipherHkdfInfo.data()), kCipherHkdfInfo.size()),
        OSSL_PARAM_construct_end()};
    const int ok = EVP_KDF_derive(ctx, out, key.size(), params);
    EVP_KDF_CTX_free(ctx);
    if (ok != 1) return Status::Internal("state encryption: HKDF failed");
    return key;
  }
  if (material.size() < kCipherMinPassphrase) {
    return Status::InvalidArgument(
        "state encryption: the key from " + source +
        " is too short: give 64 hexadecimal digits "
        "(a random key, e.g. `openssl rand -hex 32`) or a passphrase of at least " +
        std::to_string(kCipherMinPassphrase) + " characters");
  }
  if (PKCS5_PBKDF2_HMAC(material.data(), static_cast<int>(material.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), kCipherPbkdf2Iterations, EVP_sha256(),
                        static_cast<int>(key.size()), out) != 1) {
    return Status::Internal("state encryption: PBKDF2 failed");
  }
  return key;
}

std::string CipherKeyId(const std::string& key) {
  static constexpr std::string_view kLabel = "cairn key id";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(kLabel.data()), kLabel.size(), mac, &len);
  return CipherHex(mac, kCipherKeyIdHex / 2);
}

std::string CipherBase64(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(raw.data()),
                          static_cast<int>(raw.size()));
  out.resize(n);
  return out;
}

std::optional<std::string> CipherUnbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4) + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') ++pad;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

}  // namespace

std::string StateKeySource::Describe() const {
  return env.empty() ? "key file " + file : "environment variable " + env;
}

StateCipher::~StateCipher() {
  OPENSSL_cleanse(key_.data(), key_.size());
  OPENSSL_cleanse(fallback_.data(), fallback_.size());
}

Result<std::string> StateCipher::NewSalt() {
  std::string salt(kCipherSaltBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), static_cast<int>(salt.size())) !=
      1) {
    return Status::Internal("state encryption: no random bytes from OpenSSL");
  }
  return salt;
}

Result<std::string> StateCipher::NewSaltText() {
  Result<std::string> salt = NewSalt();
  if (!salt.ok()) return salt.status();
  return CipherHex(reinterpret_cast<const unsigned char*>(salt->data()), salt->size());
}

Result<std::unique_ptr<StateCipher>> StateCipher::Create(const StateEncryptionSpec& spec,
                                                         const std::string& salt,
                                                         const std::string& stack_root) {
  std::unique_ptr<StateCipher> c(new StateCipher());
  auto load = [&](const StateKeySource& src, std::string& key, std::string& id,
                  std::string& desc) -> Status {
    Result<std::string> material = CipherReadMaterial(src, stack_root);
    if (!material.ok()) return material.status();
    CipherWipe wipe{*material};
    Result<std::string> derived = CipherDerive(*material, salt, src.Describe());
    if (!derived.ok()) return derived.status();
    key = std::move(*derived);
    id = CipherKeyId(key);
    desc = src.Describe();
    return Status::Ok();
  };
  if (spec.key) CAIRN_RETURN_IF_ERROR(load(*spec.key, c->key_, c->key_id_, c->key_desc_));
  if (spec.fallback) {
    CAIRN_RETURN_IF_ERROR(load(*spec.fallback, c->fallback_, c->fallback_id_, c->fallback_desc_));
  }
  return c;
}

bool StateCipher::IsSealed(std::string_view stored) { return stored.starts_with(kCipherPrefix); }

std::string StateCipher::SealedKeyId(std::string_view stored) {
  if (!IsSealed(stored)) return "";
  stored.remove_prefix(kCipherPrefix.size());
  size_t colon = stored.find(':');
  if (colon == std::string_view::npos) return "";
  return std::string(stored.substr(0, colon));
}

bool StateCipher::Knows(std::string_view id) const {
  return !id.empty() && (id == key_id_ || id == fallback_id_);
}

std::string StateCipher::DescribeKeys() const {
  std::string out;
  if (!key_id_.empty()) out = "the key (id " + key_id_ + ") from " + key_desc_;
  if (!fallback_id_.empty()) {
    out += (out.empty() ? "" : " and ") + std::string("the fallback key (id ") + fallback_id_ +
           ") from " + fallback_desc_;
  }
  return out.empty() ? "no key" : out;
}

Result<std::string> StateCipher::Seal(std::string_view plaintext,
                                      std::string_view record_kind) const {
  if (key_.empty()) return Status::Internal("state encryption: Seal without a key");
  std::string raw(kCipherNonceBytes + plaintext.size() + kCipherTagBytes, '\0');
  auto* nonce = reinterpret_cast<unsigned char*>(raw.data());
  if (RAND_bytes(nonce, kCipherNonceBytes) != 1) {
    return Status::Internal("state encryption: no random bytes from OpenSSL");
  }
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  auto* ct = nonce + kCipherNonceBytes;
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key_.data()), nonce) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len,
                        reinterpret_cast<const unsigned char*>(record_kind.data()),
                        static_cast<int>(record_kind.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), ct, &len,
                        reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), ct + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kCipherTagBytes,
                          ct + plaintext.size()) != 1) {
    return Status::Internal("state encryption: AES-256-GCM failed");
  }
  return std::string(kCipherPrefix) + key_id_ + ":" + CipherBase64(raw);
}

Result<std::string> StateCipher::Open(std::string_view stored, std::string_view record_kind,
                                      std::string_view what) const {
  const std::string id = SealedKeyId(stored);
  auto bad = [&](const std::string& why) {
    return Status::FailedPrecondition("state encryption: " + std::string(what) + ": " + why);
  };
  if (id.size() != kCipherKeyIdHex) return bad("the encrypted record is malformed");
  const std::string* key = nullptr;
  if (id == key_id_) {
    key = &key_;
  } else if (id == fallback_id_) {
    key = &fallback_;
  } else {
    return bad("encrypted with the key id " + id + ", but Cairn was given " + DescribeKeys() +
               ": the wrong key? (give the key it was written with, or that one as fallback)");
  }
  std::optional<std::string> raw =
      CipherUnbase64(stored.substr(kCipherPrefix.size() + kCipherKeyIdHex + 1));
  if (!raw || raw->size() < kCipherNonceBytes + kCipherTagBytes) {
    return bad("the encrypted record is malformed");
  }
  const size_t n = raw->size() - kCipherNonceBytes - kCipherTagBytes;
  auto* nonce = reinterpret_cast<unsigned char*>(raw->data());
  auto* ct = nonce + kCipherNonceBytes;
  std::string plain(n, '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (!ctx ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key->data()), nonce) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len,
                        reinterpret_cast<const unsigned char*>(record_kind.data()),
                        static_cast<int>(record_kind.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &len, ct,
                        static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kCipherTagBytes, ct + n) != 1) {
    return Status::Internal("state encryption: AES-256-GCM failed");
  }
  if (EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + len, &len) !=
      1) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return bad("the encrypted record does not verify under its key (id " + id +
               "): it was altered or is corrupt");
  }
  return plain;
}

Result<StateKeyCheck> CheckStateKey(const StateCipher* cipher, const std::string& state_key_id,
                                    bool state_has_records, bool for_rekey) {
  StateKeyCheck check;
  if (!state_key_id.empty()) {
    check.sealed = true;
    if (cipher == nullptr) {
      return Status::FailedPrecondition(
          "the state is encrypted (key id " + state_key_id +
          "), but the backend has no encryption setting: give its key (encryption: {key_env: "
          "NAME} or {key_file: PATH} in the backend document)");
    }
    if (!cipher->Knows(state_key_id)) {
      return Status::FailedPrecondition(
          "the state is encrypted with the key id " + state_key_id + ", but Cairn was given " +
          cipher->DescribeKeys() +
          ": the wrong key? To rotate keys, give the old one as fallback and run "
          "`cairn state rekey`");
    }
    if (!cipher->seals() && !for_rekey) {
      return Status::FailedPrecondition(
          "the state is encrypted (key id " + state_key_id +
          ") and the backend's encryption is now unencrypted: run `cairn state rekey` to "
          "decrypt it, with its key as the fallback");
    }
    return check;
  }
  if (cipher == nullptr || !cipher->seals()) return check;
  if (!state_has_records) {
    check.sealed = check.take_over = true;
    return check;
  }
  if (for_rekey) return check;
  return Status::FailedPrecondition(
      "the state is not encrypted, but the backend asks for encryption: run `cairn state "
      "rekey` once to encrypt it (one transaction; nothing else changes)");
}

Result<std::string> SealIfConfigured(const StateCipher* cipher, std::string plaintext,
                                     std::string_view record_kind) {
  if (cipher == nullptr || !cipher->seals()) return plaintext;
  return cipher->Seal(plaintext, record_kind);
}

Result<std::string> SealStored(const StateCipher* cipher, bool sealed, std::string plaintext,
                               std::string_view record_kind) {
  if (!sealed) return plaintext;
  if (cipher == nullptr || !cipher->seals()) {
    return Status::FailedPrecondition(
        "the state is encrypted, but no key to write with is configured: run `cairn state "
        "rekey` first");
  }
  return cipher->Seal(plaintext, record_kind);
}

Result<std::string> OpenStored(const StateCipher* cipher, bool sealed, bool accept_either,
                               std::string stored, std::string_view record_kind,
                               std::string_view what) {
  const bool is_sealed = StateCipher::IsSealed(stored);
  if (!is_sealed) {
    if (sealed && !accept_either) {
      return Status::FailedPrecondition(
          "state encryption: " + std::string(what) +
          " is stored unencrypted in an encrypted state: it was altered outside Cairn");
    }
    return stored;
  }
  if (!sealed && !accept_either) {
    return Status::FailedPrecondition("state encryption: " + std::string(what) +
                                      " is encrypted in an unencrypted state: it was altered "
                                      "outside Cairn");
  }
  if (cipher == nullptr) {
    return Status::FailedPrecondition("state encryption: " + std::string(what) +
                                      " is encrypted (key id " + StateCipher::SealedKeyId(stored) +
                                      ") and the backend has no encryption setting");
  }
  return cipher->Open(stored, record_kind, what);
}

Result<Value> SealDocument(std::string_view text, const StateKeySource& key,
                           std::string_view record_kind, const std::string& stack_root) {
  StateKeySource source = key;
  if (!source.file.empty() && std::filesystem::path(source.file).is_relative() &&
      !stack_root.empty()) {
    source.file = (std::filesystem::path(stack_root) / source.file).lexically_normal().string();
  }
  Result<std::string> salt = StateCipher::NewSalt();
  if (!salt.ok()) return salt.status();
  StateEncryptionSpec spec;
  spec.key = source;
  Result<std::unique_ptr<StateCipher>> cipher = StateCipher::Create(spec, *salt);
  if (!cipher.ok()) return cipher.status();
  Result<std::string> data = (*cipher)->Seal(text, record_kind);
  if (!data.ok()) return data.status();
  Value out = {
      {"cipher", "AES-256-GCM"},
      {"salt", CipherHex(reinterpret_cast<const unsigned char*>(salt->data()), salt->size())},
      {"data", *data}};
  if (!source.env.empty()) {
    out["key_env"] = source.env;
  } else {
    out["key_file"] = source.file;
  }
  return out;
}

Result<std::string> OpenDocument(const Value& sealed, std::string_view record_kind,
                                 std::string_view what) {
  auto text = [&](const char* field) -> std::string {
    return sealed.is_object() && sealed.contains(field) && sealed[field].is_string()
               ? sealed[field].get<std::string>()
               : std::string();
  };
  const std::string salt = text("salt"), data = text("data");
  StateKeySource source{text("key_env"), text("key_file")};
  if (text("cipher") != "AES-256-GCM" || salt.size() != kCipherSaltBytes * 2 ||
      !StateCipher::IsSealed(data) || source.env.empty() == source.file.empty()) {
    return Status::FailedPrecondition(std::string(what) +
                                      ": the encrypted document is malformed or of an unknown "
                                      "kind");
  }
  for (char c : salt) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return Status::FailedPrecondition(std::string(what) +
                                        ": the encrypted document is malformed");
    }
  }
  StateEncryptionSpec spec;
  spec.key = source;
  Result<std::unique_ptr<StateCipher>> cipher = StateCipher::Create(spec, CipherUnhex(salt));
  if (!cipher.ok()) {
    return Status(cipher.status().code(),
                  std::string(what) + " is encrypted: " + cipher.status().message());
  }
  return (*cipher)->Open(data, record_kind, what);
}

}  // namespace cairn
