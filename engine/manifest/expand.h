// Expansion, a stage of loading a stack: the instances a resource or a
// module declares with `count` or `for_each` (their values evaluated
// already), and the API name each instance of a resource takes by default.
// Values in, values and diagnostics out.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/address.h"

namespace cairn {

inline constexpr long long kMaxCount = 100000;

struct Instances {
  enum class Mode { kSingle, kCount, kForEach } mode = Mode::kSingle;
  // count: 0..n-1; for_each: the keys, sorted; single: one monostate.
  std::vector<AddressIndex> indexes;
  std::vector<Value> each_values;  // for_each: the value of each key
};

// Where a document's count and for_each are, for their diagnostics.
struct ExpansionLocations {
  SourceLocation count, for_each;
  SourceLocation for_each_key;  // the `for_each:` key, where "not both" points
  std::function<SourceLocation(size_t)> for_each_item;  // item i of a for_each list
};

// The instances of a `what` ("resource", "module") with `count` and
// `for_each` as given (null when absent): count a whole number from 0 to
// kMaxCount (a float that is whole, or text such as "3", counts);
// for_each a list of distinct strings (each its own value) or a mapping.
// False, with the problem in `diags`, when they are not; `out.mode` says
// which was given even then (single when both were), so that references to the broken resource are
// still checked against it.
bool ExpandInstances(const std::string& what, const Value* count, const Value* for_each,
                     const ExpansionLocations& at, Instances& out, std::vector<Diagnostic>& diags);

// The API name of resource `name`'s instance `index` in module instances
// `module`, when its spec gives none: the module path's names and indexes,
// the name, then the index ("app-0-web-eu"), so that instances differ.
std::string DefaultApiName(const std::vector<ModuleStep>& module, const std::string& name,
                           const AddressIndex& index);

}  // namespace cairn
