# The libraries' allowed dependencies (docs/architecture.md, "Libraries"):
#
#   cli/  ->  providers/  ->  engine/  ->  base/
#   cli/  ->  server/  ->  base/
#
# base/ includes only base/ headers; engine/ includes base/ and its own (the
# provider interface is the engine's: engine/provider/provider.h);
# providers/ include engine/ and base/; server/ includes only base/ and its
# own (it is not built on the engine); cli/ wires everything. Inside
# engine/, its folders are ordered the same way (engine_order below). A source that includes a
# header of a library above its own fails this check, run at configure time
# and by the ctest "layering: no library includes a library above it":
#   cmake -DCAIRN_SOURCE_DIR=. -P cmake/CheckLayering.cmake
cmake_policy(VERSION 3.20)
set(allowed_base "base")
set(allowed_engine "base|engine")
set(allowed_providers "base|engine|providers")
set(allowed_server "base|server")
set(problems "")
foreach(lib base engine providers server)
  file(GLOB_RECURSE sources "${CAIRN_SOURCE_DIR}/${lib}/*.h" "${CAIRN_SOURCE_DIR}/${lib}/*.cc")
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

# Inside the engine, the same rule between its folders, lowest first
# (docs/architecture.md, "Inside the engine"): a folder includes the
# engine's own top-level headers (engine/*.h: addresses, actions, crash
# points) and the folders before it in this list, never one after it.
set(engine_order provider expr state graph manifest plan policy apply drift operations report watch)
set(below "")
foreach(folder ${engine_order})
  file(GLOB_RECURSE sources "${CAIRN_SOURCE_DIR}/engine/${folder}/*.h"
       "${CAIRN_SOURCE_DIR}/engine/${folder}/*.cc")
  foreach(source ${sources})
    file(STRINGS "${source}" includes REGEX "^#include \"engine/[a-z_]+/")
    foreach(line ${includes})
      string(REGEX MATCH "^#include \"engine/([a-z_]+)/" _ "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(NOT target STREQUAL folder AND NOT target IN_LIST below)
        file(RELATIVE_PATH rel "${CAIRN_SOURCE_DIR}" "${source}")
        string(REPLACE ";" ", " allowed "${below}")
        string(APPEND problems "\n  ${rel}: ${line} (engine/${folder}/ may include only "
               "engine/*.h and engine/{${allowed}}/)")
      endif()
    endforeach()
  endforeach()
  list(APPEND below ${folder})
endforeach()
# The engine's top-level headers stand below every folder.
file(GLOB top "${CAIRN_SOURCE_DIR}/engine/*.h" "${CAIRN_SOURCE_DIR}/engine/*.cc")
foreach(source ${top})
  file(STRINGS "${source}" includes REGEX "^#include \"engine/[a-z_]+/")
  foreach(line ${includes})
    file(RELATIVE_PATH rel "${CAIRN_SOURCE_DIR}" "${source}")
    string(APPEND problems "\n  ${rel}: ${line} (engine/*.h include no engine folder)")
  endforeach()
endforeach()
# A folder missing from the order above would escape the check.
file(GLOB folders LIST_DIRECTORIES true "${CAIRN_SOURCE_DIR}/engine/*")
foreach(dir ${folders})
  if(IS_DIRECTORY "${dir}")
    get_filename_component(name "${dir}" NAME)
    if(NOT name IN_LIST engine_order)
      string(APPEND problems "\n  engine/${name}/ is not in cmake/CheckLayering.cmake's engine_order")
    endif()
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "a library includes a header of a library above it:${problems}")
endif()
