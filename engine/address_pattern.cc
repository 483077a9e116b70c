#include "engine/address_pattern.h"

namespace cairn {
namespace {

constexpr std::string_view kAny = "[*]";

// Length of the index at the start of `s` ("[12]", "[\"k\\\"ey\"]"), or 0
// when `s` does not start with one.
size_t IndexLength(std::string_view s) {
  if (s.size() < 3 || s[0] != '[') return 0;
  size_t i = 1;
  if (s[i] == '"') {
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\') ++i;
    }
    if (i >= s.size()) return 0;
    ++i;
  } else {
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  }
  return i < s.size() && s[i] == ']' ? i + 1 : 0;
}

// Whether `pattern` (canonical address text with `[*]` for any index,
// none included) matches a prefix of `address` that ends where an address
// part does: at the end, before the address's own index, or before a
// module's contents.
bool MatchesPrefix(std::string_view pattern, std::string_view address) {
  while (!pattern.empty()) {
    if (pattern.starts_with(kAny)) {
      pattern.remove_prefix(kAny.size());
      address.remove_prefix(IndexLength(address));
      continue;
    }
    if (address.empty() || pattern[0] != address[0]) return false;
    if (address[0] == '[') {
      // An index must match whole: [1] is no prefix of [12].
      const size_t n = IndexLength(address);
      if (n == 0 || pattern.substr(0, n) != address.substr(0, n)) return false;
      pattern.remove_prefix(n);
      address.remove_prefix(n);
      continue;
    }
    pattern.remove_prefix(1);
    address.remove_prefix(1);
  }
  if (address.empty() || address[0] == '.') return true;
  const size_t n = IndexLength(address);
  return n > 0 && (address.size() == n || address[n] == '.');
}

}  // namespace

std::optional<AddressPattern> AddressPattern::Parse(std::string_view text) {
  // Checked as the address it would be with a concrete index for each `[*]`.
  std::string concrete(text);
  for (size_t at; (at = concrete.find(kAny)) != std::string::npos;) concrete.replace(at, 3, "[0]");
  // Only the canonical form: it is what Matches compares with.
  AddressPattern p;
  p.text_ = std::string(text);
  if (auto m = ParseModulePath(concrete)) {
    p.module_ = true;
    if (ModulePathPrefix(*m) != concrete + ".") return std::nullopt;
  } else if (auto a = ResourceAddress::Parse(concrete)) {
    if (a->ToString() != concrete) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return p;
}

bool AddressPattern::Matches(const ResourceAddress& address) const {
  return MatchesPrefix(text_, address.ToString());
}

}  // namespace cairn
