#include "engine/address.h"

#include <algorithm>
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

// Reads NAME[INDEX] at the start of `text`: the name, then an optional
// count index or quoted for_each key. Advances `text` past what it read.
bool ParseNameAndIndex(std::string_view& text, std::string& name, AddressIndex& index) {
  size_t end = 0;
  while (end < text.size() && text[end] != '.' && text[end] != '[') ++end;
  name = std::string(text.substr(0, end));
  if (!IsIdentifier(name)) return false;
  text.remove_prefix(end);
  if (text.empty() || text[0] != '[') return true;
  if (text.size() >= 2 && text[1] == '"') {
    std::string key;
    size_t i = 2;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      key += text[i];
    }
    if (i + 1 >= text.size() || text[i + 1] != ']') return false;
    index = std::move(key);
    text.remove_prefix(i + 2);
    return true;
  }
  size_t close = text.find(']');
  if (close == std::string_view::npos) return false;
  int n = 0;
  auto [ptr, ec] = std::from_chars(text.data() + 1, text.data() + close, n);
  if (close == 1 || ec != std::errc() || ptr != text.data() + close || n < 0) return false;
  index = n;
  text.remove_prefix(close + 1);
  return true;
}

bool IndexLess(const AddressIndex& a, const AddressIndex& b) {
  // monostate < int < string: the variant's own order, ints compared as ints.
  return a < b;
}

// Reads the "module.NAME[INDEX]." steps at the start of `text` into `path`.
bool ParseModuleSteps(std::string_view& text, std::vector<ModuleStep>& path, bool trailing_dot) {
  while (text.substr(0, 7) == "module.") {
    text.remove_prefix(7);
    ModuleStep step;
    if (!ParseNameAndIndex(text, step.name, step.index)) return false;
    path.push_back(std::move(step));
    if (!trailing_dot && text.empty()) return true;
    if (text.empty() || text[0] != '.') return false;
    text.remove_prefix(1);
    if (!trailing_dot && text.empty()) return false;  // "module.app."
  }
  return true;
}

}  // namespace

namespace {

void AppendIndex(std::string& out, const AddressIndex& index) {
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
}

}  // namespace

std::string IndexText(const AddressIndex& index) {
  std::string out;
  AppendIndex(out, index);
  return out;
}

std::string ModulePathPrefix(const std::vector<ModuleStep>& path) {
  std::string out;
  for (const ModuleStep& step : path) out += "module." + step.name + IndexText(step.index) + ".";
  return out;
}

// Both are on the hot path of loading and planning large stacks: built in
// one buffer, the module path only when there is one.
std::string ResourceAddress::BaseString() const {
  std::string out;
  if (!module.empty()) out = ModulePathPrefix(module);
  out.reserve(out.size() + kind.size() + name.size() + 16);
  out += kind;
  out += '.';
  out += name;
  return out;
}

std::string ResourceAddress::ToString() const {
  std::string out = BaseString();
  AppendIndex(out, index);
  return out;
}

std::optional<std::vector<ModuleStep>> ParseModulePath(std::string_view text) {
  std::vector<ModuleStep> path;
  if (!ParseModuleSteps(text, path, false) || !text.empty() || path.empty()) return std::nullopt;
  return path;
}

bool InModule(const std::vector<ModuleStep>& module, const std::vector<ModuleStep>& within) {
  if (module.size() < within.size()) return false;
  for (size_t i = 0; i < within.size(); ++i) {
    if (module[i].name != within[i].name) return false;
    if (!std::holds_alternative<std::monostate>(within[i].index) &&
        module[i].index != within[i].index)
      return false;
  }
  return true;
}

std::optional<ResourceAddress> ResourceAddress::Parse(std::string_view text) {
  ResourceAddress addr;
  if (!ParseModuleSteps(text, addr.module, true)) return std::nullopt;
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  addr.kind = std::string(text.substr(0, dot));
  if (!IsIdentifier(addr.kind)) return std::nullopt;
  text.remove_prefix(dot + 1);
  if (!ParseNameAndIndex(text, addr.name, addr.index) || !text.empty()) return std::nullopt;
  return addr;
}

namespace {
// The text form of StateKey::deposed.
constexpr std::string_view kDeposedSuffix = " (deposed)";
}  // namespace

std::string StateKey::ToString() const {
  std::string text = resource.ToString();
  if (deposed) text += kDeposedSuffix;
  return text;
}

std::optional<StateKey> StateKey::Parse(std::string_view text) {
  StateKey key;
  key.deposed = text.ends_with(kDeposedSuffix);
  if (key.deposed) text.remove_suffix(kDeposedSuffix.size());
  auto resource = ResourceAddress::Parse(text);
  if (!resource) return std::nullopt;
  key.resource = std::move(*resource);
  return key;
}

bool operator<(const ResourceAddress& a, const ResourceAddress& b) {
  if (a.module != b.module) {
    return std::lexicographical_compare(
        a.module.begin(), a.module.end(), b.module.begin(), b.module.end(),
        [](const ModuleStep& x, const ModuleStep& y) {
          return x.name != y.name ? x.name < y.name : IndexLess(x.index, y.index);
        });
  }
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.name != b.name) return a.name < b.name;
  return IndexLess(a.index, b.index);
}

bool AddressTextLess(std::string_view a, std::string_view b) {
  auto pa = ResourceAddress::Parse(a);
  auto pb = ResourceAddress::Parse(b);
  if (pa && pb) return *pa < *pb || (!(*pb < *pa) && a < b);
  if (pa || pb) return pa.has_value();
  return a < b;
}

}  // namespace cairn
