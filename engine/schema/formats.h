// String formats that JSON Schema's `format` keyword names in
// schemas/*.schema.json and that valijson does not know: "cidr" (an IPv4 or
// IPv6 address block, e.g. 10.20.0.0/16) and "openssh-public-key" (one
// OpenSSH public key line: type, base64 blob whose first field repeats the
// type, optional comment). The schema registry applies them after valijson.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cairn {

bool IsCidr(std::string_view text);
bool IsOpenSshPublicKey(std::string_view text);

// True when `text` is well-formed UTF-8. Manifests must be: valijson's
// string-length checks read past their tables on malformed sequences.
bool IsValidUtf8(std::string_view text);

// True when `format` is one of the formats above.
bool IsCustomFormat(std::string_view format);

// For a custom format: nullopt when `text` conforms, else a short noun phrase
// naming what was expected ("a CIDR block such as 10.0.0.0/16"). Formats that
// are not custom always conform.
std::optional<std::string> CheckFormat(std::string_view format, std::string_view text);

}  // namespace cairn
