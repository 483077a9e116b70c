// ResourceAddress: how the engine names one resource instance in a stack:
//   kind.name          a single resource
//   kind.name[2]       one instance of a `count` resource
//   kind.name["key"]   one instance of a `for_each` resource
// Addresses are the keys of the state, the plan and the graph; ToString() is
// their canonical, stable text form and ordering uses it.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cairn {

struct ResourceAddress {
  std::string kind;
  std::string name;
  // monostate: no index; int: count index; string: for_each key.
  std::variant<std::monostate, int, std::string> index;

  std::string ToString() const;
  // The address without its index ("instance.web" for "instance.web[2]").
  std::string BaseString() const { return kind + "." + name; }

  // Parses the canonical form; nullopt when `text` is not an address.
  static std::optional<ResourceAddress> Parse(std::string_view text);

  friend bool operator==(const ResourceAddress&, const ResourceAddress&) = default;
  // Natural order: kind, name, then the index, counts numerically
  // (web[2] before web[10]) and keys as text; no index first.
  friend bool operator<(const ResourceAddress& a, const ResourceAddress& b);
};

// The same order on address text (what users see in plans and lists); text
// that is not an address sorts after addresses, by text.
bool AddressTextLess(std::string_view a, std::string_view b);
struct AddressTextOrder {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return AddressTextLess(a, b); }
};

}  // namespace cairn
