// Collection functions (filled in by the functions work).
#include "engine/expr/functions.h"

namespace cairn::expr {

void RegisterCollectionFunctions(FunctionTable& t) { (void)t; }

}  // namespace cairn::expr
