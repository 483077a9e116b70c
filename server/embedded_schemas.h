// The texts of schemas/*.schema.json as they were when the server was built
// (server/CMakeLists.txt compiles them in). `cairn serve` builds its
// SchemaRegistry from them, so the limits it enforces are the schemas'
// limits and it needs no schema directory at run time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cairn::server {

// (file name such as "instance.schema.json", its text), sorted by name.
const std::vector<std::pair<std::string, std::string>>& EmbeddedSchemas();

}  // namespace cairn::server
