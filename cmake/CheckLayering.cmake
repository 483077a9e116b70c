# The libraries' allowed dependencies (docs/architecture.md, "Libraries"):
#
#   cli/  ->  providers/  ->  engine/  ->  base/
#   cli/  ->  server/  ->  base/
#
# base/ includes only base/ headers; engine/ includes base/ and its own (the
# provider interface is the engine's: engine/provider/provider.h);
# providers/ include engine/ and base/; server/ includes only base/ and its
# own (it is not built on the engine); cli/ wires everything. A source that includes a
# header of a library above its own fails this check, run at configure time
# and by the ctest "layering: no library includes a library above it":
#   cmake -DCAIRN_SOURCE_DIR=. -P cmake/CheckLayering.cmake
set(allowed_base "base")
set(allowed_engine "base|engine")
set(allowed_providers "base|engine|providers")
set(allowed_server "base|server")
set(problems "")
foreach(lib base engine providers server)
  file(GLOB_RECURSE sources "${CAIRN_SOURCE_DIR}/${lib}/*.h" "${CAIRN_SOURCE_DIR}/${lib}/*.cc")
  list(FILTER sources EXCLUDE REGEX ".*_fuzz\\.cc$")
  foreach(source ${sources})
    file(STRINGS "${source}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX MATCH "^#include \"([a-z_]+)/" _ "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(NOT target MATCHES "^(${allowed_${lib}})$")
        file(RELATIVE_PATH rel "${CAIRN_SOURCE_DIR}" "${source}")
        string(APPEND problems "\n  ${rel}: ${line} (${lib}/ may include only ${allowed_${lib}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "a library includes a header of a library above it:${problems}")
endif()
