#include "providers/infra/canonical_id.h"

#include <array>
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

std::string CanonicalId(std::string_view id) {
  if (IsUuid(id)) return Lower(id);
  static constexpr std::array<std::string_view, 2> kPrefixes = {"inst_", "net_"};
  for (std::string_view prefix : kPrefixes) {
    if (id.size() != prefix.size() + 32 || id.substr(0, prefix.size()) != prefix) continue;
    std::string_view hex = id.substr(prefix.size());
    bool all_hex = true;
    for (char c : hex) all_hex = all_hex && IsHex(c);
    if (all_hex) return HyphenateHex32(hex);
  }
  return std::string(id);
}

std::string CanonicalIdsIn(std::string_view text) {
  static constexpr std::array<std::string_view, 2> kPrefixes = {"inst_", "net_"};
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (i == 0 || !word_char(text[i - 1])) {
      for (std::string_view prefix : kPrefixes) {
        const size_t end = i + prefix.size() + 32;
        if (end > text.size() || text.substr(i, prefix.size()) != prefix) continue;
        if (end < text.size() && word_char(text[end])) continue;
        std::string canonical = CanonicalId(text.substr(i, end - i));
        if (IsUuid(canonical)) {
          out += canonical;
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

bool IsSafePathId(std::string_view id) {
  if (id.empty() || id.size() > 200 || id == "." || id == "..") return false;
  for (char c : id) {
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~';
    if (!ok) return false;
  }
  return true;
}

}  // namespace cairn
