// Manifests written for resources that already exist (`cairn import
// --generate FILE`): one document per resource, its spec the live object's
// spec fields (computed attributes and unset fields left out), in the
// schema's field order. A reference field whose id is that of another
// resource the stack knows becomes a reference (`${network.core.id}`), so
// the loader sees the dependency. Strings that look like expressions are
// escaped, so the file reads back as the values it was written from.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/schema/schema_registry.h"
#include "base/value.h"
#include "engine/address.h"

namespace cairn {

struct ExistingResource {
  ResourceAddress address;  // without an index: one document each
  Value attributes;         // live, in manifest field names
};

// `known_ids`: canonical id -> address text of every resource the stack can
// refer to (those generated included), ids in their canonical form
// (CanonicalIdWith and the registry's kinds' id_alias).
std::string GenerateManifests(const std::vector<ExistingResource>& resources,
                              const SchemaRegistry& registry,
                              const std::map<std::string, std::string>& known_ids);

}  // namespace cairn
