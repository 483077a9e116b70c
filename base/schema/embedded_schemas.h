// The texts of schemas/*.schema.json as they were when cairn was built
// (base/CMakeLists.txt compiles them in from embedded_schemas.cc.in). They
// are the only schemas the binary has: SchemaRegistry::Embedded() builds the
// one registry that the engine (`cairn validate`, `plan`, `schema`, ...) and
// `cairn serve` both use, so an installed cairn needs no schema directory and
// the two can never read different schemas.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cairn {

// (file name such as "instance.schema.json", its text), sorted by name.
const std::vector<std::pair<std::string, std::string>>& EmbeddedSchemas();

}  // namespace cairn
