// String formats that JSON Schema's `format` keyword names in
// schemas/*.schema.json and that valijson does not know. The schema registry
// applies them after valijson, for `cairn validate` and `cairn serve` alike,
// so the two refuse exactly the same values:
//   cidr                an IPv4 network address block, e.g. 10.20.0.0/16: no
//                       host bits set; prefix lengths bounded by the
//                       property's "x-cairn-prefix-length" (default 0 to 32).
//                       IPv6 is refused: the API serves IPv4 only.
//   port-range          "22", "8000-8080" (first <= last, 1 to 65535) or "any".
//   printable           text without control characters (Unicode Cc: U+0000
//                       to U+001F, U+007F, U+0080 to U+009F).
//   openssh-public-key  one OpenSSH public key line: type, base64 blob whose
//                       first field repeats the type, optional comment.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// Bounds a schema puts on a format beside the `format` keyword. Only "cidr"
// has any: "x-cairn-prefix-length": {"minimum": 8, "maximum": 29}.
struct FormatLimits {
  int min_prefix = 0;
  int max_prefix = 32;
};

// Why a value breaks its format.
struct FormatProblem {
  // What the value must be, phrased to follow the field's name:
  // "must be a CIDR block such as 10.0.0.0/16".
  std::string expected;
  // The precise fault when there is more to say than `expected`, phrased the
  // same way ("key data is not valid base64"); never echoes key material.
  std::string reason;
  // `reason` if there is one, else `expected`.
  const std::string& Precise() const { return reason.empty() ? expected : reason; }
};

bool IsCidr(std::string_view text, const FormatLimits& limits = {});
bool IsOpenSshPublicKey(std::string_view text);

// An OpenSSH public key line taken apart (see ParseOpenSshPublicKey).
struct OpenSshPublicKey {
  std::string type;     // "ssh-ed25519"
  std::string base64;   // the blob as written
  std::string comment;  // may be empty
  std::string blob;     // the decoded blob
};

// Parses one OpenSSH public key line. Surrounding spaces and one trailing
// line break are tolerated; fields are separated by spaces. Returns the
// problem, or nullopt and fills `out` (if given).
std::optional<FormatProblem> ParseOpenSshPublicKey(std::string_view text, OpenSshPublicKey* out);

// True when `text` is well-formed UTF-8. Manifests must be: valijson's
// string-length checks read past their tables on malformed sequences.
bool IsValidUtf8(std::string_view text);

// For a custom format: nullopt when `text` conforms, else the problem.
// Formats that are not custom always conform.
std::optional<FormatProblem> CheckFormat(std::string_view format, std::string_view text,
                                         const FormatLimits& limits = {});

}  // namespace cairn
