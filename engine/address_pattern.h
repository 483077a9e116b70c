// Address patterns: what --target and --exclude take. A pattern is a
// resource address or a module path in which any index may be `[*]`, "any
// instance":
//
//   instance.web             every instance of instance.web
//   instance.web[2]          that one instance
//   instance.web[*]          every instance (the same as instance.web)
//   module.app               everything in every instance of module app
//   module.app[*].network.main
//                            network.main in every instance of module app
//   module.app["eu"].instance.web[*]
//
// A resource address without its index names all its instances, and a
// module path everything inside it, as Terraform's -target does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/address.h"

namespace cairn {

class AddressPattern {
 public:
  // nullopt when `text` is neither an address nor a module path, `[*]`
  // allowed for any index.
  static std::optional<AddressPattern> Parse(std::string_view text);

  // Whether it names `address` (one of its instances, or a resource inside
  // its module).
  bool Matches(const ResourceAddress& address) const;

  const std::string& text() const { return text_; }
  // Whether it is a module path (module.app, module.app[*]) rather than a
  // resource's address.
  bool is_module() const { return module_; }

 private:
  std::string text_;
  bool module_ = false;
};

}  // namespace cairn
