// StateCipher: encryption at rest of what a state (and a saved plan) holds
// that is not needed to find a row: resource attributes, outputs, journal
// request bodies and contexts. Addresses, kinds, remote ids, sequence
// numbers, idempotency keys, lineage and serial stay plaintext: they are the
// lookup keys (docs/security.md, "Encryption at rest" says what that means).
//
// KEYS. A key source is an environment variable or a file holding the key
// material; the 256-bit record key is derived from it with the state's own
// random salt (16 bytes, kept in the state's metadata, not secret):
//   - material that is 64 hexadecimal digits is taken as 32 random bytes and
//     expanded with HKDF-SHA256 (a random key needs no stretching);
//   - anything else is a passphrase (at least 16 characters), stretched with
//     PBKDF2-HMAC-SHA256, 600,000 iterations (OWASP's 2023 figure, OpenTofu's
//     default), about 0.3 s per open.
// A key's id is the first 8 bytes, in hex, of HMAC-SHA256(record key,
// "cairn key id"): it names the key without revealing it, and lets a reader
// tell a wrong key from a corrupt record before any decryption is tried.
//
// RECORDS. Seal() gives text (so that TEXT columns of both backends take it):
//   cairn-enc1:<key id, 16 hex>:<base64 of nonce (12) || ciphertext || tag (16)>
// AES-256-GCM through OpenSSL EVP, a fresh random nonce per record, and the
// record's kind ("resources.attributes", ...) as associated data, so a sealed
// value cannot pass for another kind of record. A record sealed under a key
// that is neither the key nor the fallback is an error naming both ids; a
// record whose tag does not verify is an error naming the record (tampered
// or corrupt), never "bad decrypt".
//
// Thread-safe: every method is const and uses its own EVP context.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/value.h"

namespace cairn {

// The record kinds (associated data) of the state's sealed records.
inline constexpr std::string_view kSealedAttributes = "resources.attributes";
inline constexpr std::string_view kSealedOutput = "outputs.value";
inline constexpr std::string_view kSealedJournalBody = "journal.body";
inline constexpr std::string_view kSealedJournalContext = "journal.context";

// Where key material is read from: exactly one of env and file.
struct StateKeySource {
  std::string env;   // an environment variable's name
  std::string file;  // a file's path (absolute, or relative to the stack root)
  // "environment variable CAIRN_STATE_KEY" / "key file /path".
  std::string Describe() const;
};

// The backend's `encryption` setting.
//   key set:                 records are sealed under it; the fallback, if
//                            any, only reads (rotation);
//   key unset, fallback set: records are written plaintext; the fallback
//                            reads the old sealed ones (turning encryption
//                            off: `encryption: {unencrypted: true, fallback: ...}`);
//   neither:                 no encryption (the default).
struct StateEncryptionSpec {
  std::optional<StateKeySource> key;
  std::optional<StateKeySource> fallback;
  bool configured() const { return key.has_value() || fallback.has_value(); }
};

class StateCipher {
 public:
  // Reads the key material of `spec` and derives the record keys with `salt`
  // (raw bytes). InvalidArgument naming the source (never the key) when a
  // variable is unset or empty, a file is unreadable or empty, or a
  // passphrase is too short. `stack_root` resolves relative key files.
  static Result<std::unique_ptr<StateCipher>> Create(const StateEncryptionSpec& spec,
                                                     const std::string& salt,
                                                     const std::string& stack_root = "");
  // 16 random bytes.
  static Result<std::string> NewSalt();
  // 16 random bytes in hex: a salt for a text column (used as is).
  static Result<std::string> NewSaltText();
  // The stored text is a sealed record.
  static bool IsSealed(std::string_view stored);
  // The key id of a sealed record ("" when not one).
  static std::string SealedKeyId(std::string_view stored);

  ~StateCipher();
  StateCipher(const StateCipher&) = delete;
  StateCipher& operator=(const StateCipher&) = delete;

  // Records are sealed (a key is set), not written plaintext.
  bool seals() const { return !key_id_.empty(); }
  const std::string& key_id() const { return key_id_; }                // "" when no key
  const std::string& fallback_key_id() const { return fallback_id_; }  // "" when none
  bool Knows(std::string_view key_id) const;

  // `plaintext` sealed under the key, `record_kind` bound as associated data.
  // Internal when no key is set.
  Result<std::string> Seal(std::string_view plaintext, std::string_view record_kind) const;
  // The plaintext of a sealed record. FailedPrecondition, naming `what` (an
  // address, an output...), for an unknown key id, a malformed record or a
  // tag that does not verify.
  Result<std::string> Open(std::string_view stored, std::string_view record_kind,
                           std::string_view what) const;
  // "the key (id 1a2b...) from environment variable K[, fallback ...]": for
  // messages.
  std::string DescribeKeys() const;

 private:
  StateCipher() = default;
  std::string key_;  // 32 bytes, or empty
  std::string key_id_;
  std::string key_desc_;
  std::string fallback_;
  std::string fallback_id_;
  std::string fallback_desc_;
};

// What a store makes of its state's key id at open (the same rules on every
// backend): `sealed`, the state's records are sealed; `take_over`, the state
// is plaintext and empty and a key is configured: the store marks it sealed
// under the key (state_key_id := cipher->key_id()) before it is used.
struct StateKeyCheck {
  bool sealed = false;
  bool take_over = false;
};
// `state_key_id`: the state's (empty: plaintext); `cipher`: null without an
// encryption setting. FailedPrecondition, naming the key ids and what to do,
// for an encrypted state without a setting or with keys that are not its,
// for an encrypted state whose setting is `unencrypted`, and for a plaintext
// state with records and a key; the last two pass `for_rekey`.
Result<StateKeyCheck> CheckStateKey(const StateCipher* cipher, const std::string& state_key_id,
                                    bool state_has_records, bool for_rekey);

// Seals `plaintext` when `cipher` seals, else returns it as is.
Result<std::string> SealIfConfigured(const StateCipher* cipher, std::string plaintext,
                                     std::string_view record_kind);

// What to store for `plaintext` in a state whose records are sealed
// (`sealed`) or not: sealed under `cipher`'s key, or as is.
// FailedPrecondition when the state is sealed and no key to write with is
// configured (only a fallback, or none).
Result<std::string> SealStored(const StateCipher* cipher, bool sealed, std::string plaintext,
                               std::string_view record_kind);

// The plaintext of a stored record, in a state whose records are sealed
// (`sealed`) or not. A sealed record in a plaintext state, or a plaintext
// one in a sealed state, is FailedPrecondition naming `what`; with
// `accept_either` (cairn state rekey) both kinds are read.
Result<std::string> OpenStored(const StateCipher* cipher, bool sealed, bool accept_either,
                               std::string stored, std::string_view record_kind,
                               std::string_view what);

// A whole document (a saved plan) sealed on its own: a fresh salt, and the
// key's source named (never the key), so that a reader needs nothing else:
//   {"cipher": "AES-256-GCM", "key_env": NAME | "key_file": ABSOLUTE PATH,
//    "salt": HEX, "data": "cairn-enc1:<key id>:<base64>"}
// A relative key file is made absolute against `stack_root`.
Result<Value> SealDocument(std::string_view text, const StateKeySource& key,
                           std::string_view record_kind, const std::string& stack_root);
// The text of a sealed document; InvalidArgument naming the key's source
// when it is unset or unreadable, FailedPrecondition (naming `what` and the
// key ids) for a wrong key or an altered document.
Result<std::string> OpenDocument(const Value& sealed, std::string_view record_kind,
                                 std::string_view what);

}  // namespace cairn
