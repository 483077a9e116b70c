// Encoding functions (filled in by the functions work).
#include "engine/expr/functions.h"

namespace cairn::expr {

void RegisterEncodingFunctions(FunctionTable& t) { (void)t; }

}  // namespace cairn::expr
