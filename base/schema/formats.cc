#include "base/schema/formats.h"

#include <arpa/inet.h>
#include <openssl/evp.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <vector>

namespace cairn {
namespace {

constexpr std::array<std::string_view, 7> kSshKeyTypes = {
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '=';
}

// A decimal number of 1 to `max_digits` digits without a leading zero (so
// every value has one spelling, the one the API echoes back).
bool ParseDecimal(std::string_view s, size_t max_digits, int* out) {
  if (s.empty() || s.size() > max_digits || (s.size() > 1 && s[0] == '0')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Dotted-quad IPv4, each octet 0 to 255 without leading zeros.
bool ParseIpv4(std::string_view s, uint32_t* out) {
  uint32_t v = 0;
  for (int part = 0; part < 4; ++part) {
    size_t dot = part < 3 ? s.find('.') : s.size();
    if (dot == std::string_view::npos) return false;
    int octet = 0;
    if (!ParseDecimal(s.substr(0, dot), 3, &octet) || octet > 255) return false;
    v = (v << 8) | static_cast<uint32_t>(octet);
    s.remove_prefix(part < 3 ? dot + 1 : dot);
  }
  *out = v;
  return true;
}

std::string Ipv4Text(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." +
         std::to_string((a >> 8) & 0xff) + "." + std::to_string(a & 0xff);
}

std::optional<FormatProblem> CidrProblem(std::string_view text, const FormatLimits& limits) {
  const FormatProblem kNotCidr{"must be a CIDR block such as 10.0.0.0/16", ""};
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return kNotCidr;
  std::string_view addr_text = text.substr(0, slash);
  int prefix = -1;
  if (!ParseDecimal(text.substr(slash + 1), 3, &prefix)) return kNotCidr;
  uint32_t addr = 0;
  if (!ParseIpv4(addr_text, &addr)) {
    unsigned char buf[16];
    if (addr_text.size() < 64 && prefix <= 128 &&
        inet_pton(AF_INET6, std::string(addr_text).c_str(), buf) == 1) {
      return FormatProblem{"must be an IPv4 CIDR block such as 10.0.0.0/16 (IPv6 is not offered)",
                           ""};
    }
    return kNotCidr;
  }
  if (prefix > 32) return kNotCidr;
  if (prefix < limits.min_prefix || prefix > limits.max_prefix) {
    return FormatProblem{"must have a prefix length from /" + std::to_string(limits.min_prefix) +
                             " to /" + std::to_string(limits.max_prefix),
                         ""};
  }
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  if ((addr & ~mask) != 0) {
    return FormatProblem{"must be a network address, without host bits (did you mean " +
                             Ipv4Text(addr & mask) + "/" + std::to_string(prefix) + "?)",
                         ""};
  }
  return std::nullopt;
}

std::optional<FormatProblem> PortRangeProblem(std::string_view text) {
  if (text == "any") return std::nullopt;
  auto port = [](std::string_view s, int* out) {
    return ParseDecimal(s, 5, out) && *out >= 1 && *out <= 65535;
  };
  int lo = 0, hi = 0;
  size_t dash = text.find('-');
  bool ok = dash == std::string_view::npos
                ? port(text, &lo)
                : port(text.substr(0, dash), &lo) && port(text.substr(dash + 1), &hi) && lo <= hi;
  if (ok) return std::nullopt;
  return FormatProblem{"must be a port (\"22\"), a range (\"8000-8080\", 1 to 65535) or \"any\"",
                       ""};
}

std::optional<FormatProblem> PrintableProblem(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    // C1 (U+0080..U+009F) is 0xC2 0x80..0x9F in UTF-8.
    bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(s[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7f || c1)
      return FormatProblem{"must not contain control characters", ""};
  }
  return std::nullopt;
}

}  // namespace

bool IsCidr(std::string_view text, const FormatLimits& limits) {
  return !CidrProblem(text, limits).has_value();
}

std::optional<FormatProblem> ParseOpenSshPublicKey(std::string_view line, OpenSshPublicKey* out) {
  auto bad = [](std::string reason) {
    return FormatProblem{
        "must be an OpenSSH public key line such as \"ssh-ed25519 AAAAC3Nza... user@host\"",
        std::move(reason)};
  };
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos) {
    return bad("must be a single OpenSSH public key line");
  }
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos) {
    return bad("must be an OpenSSH public key line: TYPE BASE64 [COMMENT]");
  }
  std::string_view type = line.substr(0, sp);
  bool known = false;
  for (auto t : kSshKeyTypes) known = known || t == type;
  if (!known) {
    return bad(
        "has an unsupported key type (ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521, "
        "sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com)");
  }
  std::string_view rest = line.substr(sp + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t sp2 = rest.find(' ');
  std::string_view b64 = rest.substr(0, sp2);
  std::string_view comment =
      sp2 == std::string_view::npos ? std::string_view() : rest.substr(sp2 + 1);
  if (b64.empty() || b64.size() % 4 != 0 || b64.size() > 16384) {
    return bad("key data is not valid base64");
  }
  for (char c : b64) {
    if (!IsBase64Char(c)) return bad("key data is not valid base64");
  }
  std::vector<unsigned char> blob(b64.size());
  int n = EVP_DecodeBlock(blob.data(), reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return bad("key data is not valid base64");
  size_t pad = 0;
  for (size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) ++pad;
  if (pad > 2) return bad("key data is not valid base64");
  size_t len = static_cast<size_t>(n) - pad;
  if (len < 4) return bad("key data is too short");
  // The blob starts with the key type again, as an SSH string (uint32 length + bytes).
  uint32_t tlen = (uint32_t{blob[0]} << 24) | (uint32_t{blob[1]} << 16) | (uint32_t{blob[2]} << 8) |
                  uint32_t{blob[3]};
  if (tlen > len - 4 ||
      std::string_view(reinterpret_cast<const char*>(blob.data()) + 4, tlen) != type) {
    return bad("key data does not match its key type");
  }
  if (len - 4 - tlen < 16) return bad("key data is too short");
  if (out != nullptr) {
    out->type = std::string(type);
    out->base64 = std::string(b64);
    out->comment = std::string(comment);
    out->blob.assign(reinterpret_cast<const char*>(blob.data()), len);
  }
  return std::nullopt;
}

bool IsOpenSshPublicKey(std::string_view text) {
  return !ParseOpenSshPublicKey(text, nullptr).has_value();
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

std::optional<FormatProblem> CheckFormat(std::string_view format, std::string_view text,
                                         const FormatLimits& limits) {
  if (format == "cidr") return CidrProblem(text, limits);
  if (format == "port-range") return PortRangeProblem(text);
  if (format == "printable") return PrintableProblem(text);
  if (format == "openssh-public-key") return ParseOpenSshPublicKey(text, nullptr);
  return std::nullopt;
}

}  // namespace cairn
