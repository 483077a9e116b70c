// Hash functions: md5, sha1, sha256, sha512 (lowercase hex), base64sha256,
// base64sha512 (the raw digest in base64), and uuidv5 (RFC 4122's
// name-based UUID over SHA-1). All through OpenSSL's EVP; each hashes the
// string's UTF-8 bytes.
#include <openssl/evp.h>

#include <cstdio>

#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

FunctionImpl HexDigestFn(const EVP_MD* (*md)()) {
  return [md](const std::vector<Value>& a, CallContext& cx) {
    auto s = ArgString(a[0], 0, cx);
    if (!s) return Value();
    return Value::String(Hex(Digest(md(), *s)));
  };
}

FunctionImpl Base64DigestFn(const EVP_MD* (*md)()) {
  return [md](const std::vector<Value>& a, CallContext& cx) {
    auto s = ArgString(a[0], 0, cx);
    if (!s) return Value();
    return Value::String(Base64(Digest(md(), *s)));
  };
}

// A UUID's 16 bytes from its text: the usual 8-4-4-4-12 hex form, also
// with "urn:uuid:" before it or in braces, or 32 hex digits alone (the
// forms Terraform's uuidv5 accepts).
std::optional<std::string> ParseUuid(std::string_view s) {
  if (s.starts_with("urn:uuid:")) s.remove_prefix(9);
  if (s.size() == 38 && s.front() == '{' && s.back() == '}') s = s.substr(1, 36);
  std::string hex;
  if (s.size() == 36) {
    for (size_t i = 0; i < s.size(); ++i) {
      bool dash_place = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash_place != (s[i] == '-')) return std::nullopt;
      if (!dash_place) hex += s[i];
    }
  } else if (s.size() == 32) {
    hex = std::string(s);
  } else {
    return std::nullopt;
  }
  std::string bytes;
  for (size_t i = 0; i < 32; i += 2) {
    auto nibble = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    bytes += static_cast<char>(hi * 16 + lo);
  }
  return bytes;
}

Value UuidV5Fn(const std::vector<Value>& a, CallContext& cx) {
  auto ns = ArgString(a[0], 0, cx);
  auto name = ArgString(a[1], 1, cx);
  if (!ns || !name) return Value();
  // RFC 4122, appendix C.
  static const std::pair<const char*, const char*> kNamespaces[] = {
      {"dns", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
      {"url", "6ba7b811-9dad-11d1-80b4-00c04fd430c8"},
      {"oid", "6ba7b812-9dad-11d1-80b4-00c04fd430c8"},
      {"x500", "6ba7b814-9dad-11d1-80b4-00c04fd430c8"},
  };
  std::string ns_text = *ns;
  for (const auto& [key, uuid] : kNamespaces)
    if (ns_text == key) ns_text = uuid;
  auto ns_bytes = ParseUuid(ns_text);
  if (!ns_bytes) {
    cx.ArgError(0, "the namespace must be \"dns\", \"url\", \"oid\", \"x500\" or a UUID, not \"" +
                       *ns + "\"");
    return Value();
  }
  std::string hash = Digest(EVP_sha1(), *ns_bytes + *name).substr(0, 16);
  hash[6] = static_cast<char>((hash[6] & 0x0F) | 0x50);  // version 5
  hash[8] = static_cast<char>((hash[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string hex = Hex(hash);
  return Value::String(hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
                       hex.substr(16, 4) + "-" + hex.substr(20));
}

}  // namespace

void RegisterHashFunctions(FunctionTable& t) {
  auto add = [&](const char* name, int n, FunctionImpl f, const char* sig) {
    FunctionSpec s;
    s.min_args = s.max_args = n;
    s.impl = std::move(f);
    s.signature = sig;
    t[name] = std::move(s);
  };
  add("md5", 1, HexDigestFn(EVP_md5), "string");
  add("sha1", 1, HexDigestFn(EVP_sha1), "string");
  add("sha256", 1, HexDigestFn(EVP_sha256), "string");
  add("sha512", 1, HexDigestFn(EVP_sha512), "string");
  add("base64sha256", 1, Base64DigestFn(EVP_sha256), "string");
  add("base64sha512", 1, Base64DigestFn(EVP_sha512), "string");
  add("uuidv5", 2, UuidV5Fn, "namespace, name");
}

}  // namespace cairn::expr
