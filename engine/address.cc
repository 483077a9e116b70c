#include "engine/address.h"

#include <cctype>
#include <charconv>

namespace cairn {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

}  // namespace

std::string ResourceAddress::ToString() const {
  std::string out = kind + "." + name;
  if (const int* i = std::get_if<int>(&index)) {
    out += '[';
    out += std::to_string(*i);
    out += ']';
  } else if (const std::string* k = std::get_if<std::string>(&index)) {
    out += "[\"";
    for (char c : *k) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += "\"]";
  }
  return out;
}

std::optional<ResourceAddress> ResourceAddress::Parse(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  ResourceAddress addr;
  addr.kind = std::string(text.substr(0, dot));
  std::string_view rest = text.substr(dot + 1);
  size_t bracket = rest.find('[');
  addr.name = std::string(rest.substr(0, bracket));
  if (!IsIdentifier(addr.kind) || !IsIdentifier(addr.name)) return std::nullopt;
  if (bracket == std::string_view::npos) return addr;
  std::string_view idx = rest.substr(bracket + 1);
  if (idx.empty() || idx.back() != ']') return std::nullopt;
  idx.remove_suffix(1);
  if (idx.size() >= 2 && idx.front() == '"' && idx.back() == '"') {
    std::string key;
    for (size_t i = 1; i + 1 < idx.size(); ++i) {
      if (idx[i] == '\\' && i + 2 < idx.size()) ++i;
      key += idx[i];
    }
    addr.index = std::move(key);
    return addr;
  }
  int n = 0;
  auto [ptr, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), n);
  if (ec != std::errc() || ptr != idx.data() + idx.size() || n < 0) return std::nullopt;
  addr.index = n;
  return addr;
}

bool operator<(const ResourceAddress& a, const ResourceAddress& b) {
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.name != b.name) return a.name < b.name;
  // monostate < int < string: the variant's own order, ints compared as ints.
  return a.index < b.index;
}

bool AddressTextLess(std::string_view a, std::string_view b) {
  auto pa = ResourceAddress::Parse(a);
  auto pb = ResourceAddress::Parse(b);
  if (pa && pb) return *pa < *pb || (!(*pb < *pa) && a < b);
  if (pa || pb) return pa.has_value();
  return a < b;
}

}  // namespace cairn
