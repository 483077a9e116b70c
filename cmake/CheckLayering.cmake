# The libraries' allowed dependencies (docs/architecture.md, "Libraries"):
#
#   cli/  ->  server/, providers/  ->  engine/
#
# engine/ includes only engine/ headers (the provider interface is the
# engine's: engine/provider/provider.h); providers/ and server/ include
# engine/ and their own; cli/ wires everything. A source that includes a
# header of a library above its own fails this check, run at configure time
# and by the ctest "layering: no library includes a library above it":
#   cmake -DCAIRN_SOURCE_DIR=. -P cmake/CheckLayering.cmake
set(allowed_engine "engine")
set(allowed_providers "engine|providers")
set(allowed_server "engine|server")
set(problems "")
foreach(lib engine providers server)
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
