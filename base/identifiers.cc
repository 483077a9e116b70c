#include "base/identifiers.h"

#include <cctype>

namespace cairn {
namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "0123...1f" (32 hex) -> "01234567-89ab-cdef-0123-456789abcdef".
std::string HyphenateHex32(std::string_view hex) {
  std::string lower = Lower(hex);
  return lower.substr(0, 8) + "-" + lower.substr(8, 4) + "-" + lower.substr(12, 4) + "-" +
         lower.substr(16, 4) + "-" + lower.substr(20, 12);
}

}  // namespace

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool hyphen_slot = (i == 8 || i == 13 || i == 18 || i == 23);
    if (hyphen_slot ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

std::string CanonicalIdWith(std::string_view id, const std::vector<std::string>& aliases) {
  if (IsUuid(id)) return Lower(id);
  for (const std::string& prefix : aliases) {
    if (prefix.empty() || id.size() != prefix.size() + 32 || !id.starts_with(prefix)) continue;
    std::string_view hex = id.substr(prefix.size());
    bool all_hex = true;
    for (char c : hex) all_hex = all_hex && IsHex(c);
    if (all_hex) return HyphenateHex32(hex);
  }
  return std::string(id);
}

}  // namespace cairn
