#include "providers/infra/canonical_id.h"

#include <cctype>
#include <vector>

namespace cairn {
const std::vector<std::string>& PreviewPrefixes() {
  static const std::vector<std::string> kPrefixes = {"inst_", "net_"};
  return kPrefixes;
}

std::string CanonicalId(std::string_view id) { return CanonicalIdWith(id, PreviewPrefixes()); }

std::string CanonicalIdsIn(std::string_view text) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (i == 0 || !word_char(text[i - 1])) {
      for (std::string_view prefix : PreviewPrefixes()) {
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
