// String functions (filled in by the functions work).
#include "engine/expr/functions.h"

namespace cairn::expr {

void RegisterStringFunctions(FunctionTable& t) { (void)t; }

}  // namespace cairn::expr
