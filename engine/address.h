// ResourceAddress: how the engine names one resource instance in a stack:
//   kind.name          a single resource
//   kind.name[2]       one instance of a `count` resource
//   kind.name["key"]   one instance of a `for_each` resource
//   module.app.kind.name, module.app[0].module.db.kind.name["k"]
//                      a resource declared in a module instance (`kind:
//                      module`), its path of module instances first
// Addresses are the keys of the state, the plan and the graph; ToString() is
// their canonical, stable text form and ordering uses it.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cairn {

// monostate: no index; int: count index; string: for_each key.
using AddressIndex = std::variant<std::monostate, int, std::string>;

// "[2]", "[\"key\"]" or "" (quotes and backslashes in a key escaped).
std::string IndexText(const AddressIndex& index);

// One module instance on the way to a resource: module.NAME[INDEX].
struct ModuleStep {
  std::string name;
  AddressIndex index;
  friend bool operator==(const ModuleStep&, const ModuleStep&) = default;
};

// "module.app[0].module.db." for that path, "" for the root.
std::string ModulePathPrefix(const std::vector<ModuleStep>& path);

// Parses a module instance path alone ("module.app", "module.app[0].module.db");
// nullopt when `text` is not one.
std::optional<std::vector<ModuleStep>> ParseModulePath(std::string_view text);

// Whether `module` is inside `within`: each step of `within` matches the
// same step of `module` by name, and by index when `within` gives one
// ("module.app" holds module.app[0] and module.app[1]).
bool InModule(const std::vector<ModuleStep>& module, const std::vector<ModuleStep>& within);

struct ResourceAddress {
  std::string kind;
  std::string name;
  AddressIndex index;
  // The module instances it is declared in, outermost first; empty for a
  // resource of the stack itself.
  std::vector<ModuleStep> module;

  std::string ToString() const;
  // The address without its own index ("module.a.instance.web" for
  // "module.a.instance.web[2]").
  std::string BaseString() const;

  // Parses the canonical form; nullopt when `text` is not an address.
  static std::optional<ResourceAddress> Parse(std::string_view text);

  friend bool operator==(const ResourceAddress&, const ResourceAddress&) = default;
  // Natural order: the stack's own resources first, then by module path;
  // then kind, name and index, counts numerically (web[2] before web[10])
  // and keys as text; no index first.
  friend bool operator<(const ResourceAddress& a, const ResourceAddress& b);
};

// The key of one object in the state: a resource instance's, or (deposed)
// the old object a create_before_destroy replace of that instance keeps
// until its delete commits. The state stores and shows it as text
// (ToString): the address, then " (deposed)" for a deposed object; Parse
// reads that text back, which is the only place the suffix is parsed.
struct StateKey {
  ResourceAddress resource;
  bool deposed = false;

  std::string ToString() const;
  // nullopt when `text` is neither form.
  static std::optional<StateKey> Parse(std::string_view text);

  friend bool operator==(const StateKey&, const StateKey&) = default;
};

// The same order on address text (what users see in plans and lists); text
// that is not an address sorts after addresses, by text.
bool AddressTextLess(std::string_view a, std::string_view b);
struct AddressTextOrder {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return AddressTextLess(a, b); }
};

}  // namespace cairn
