# Every third-party dependency comes from a Debian package and is found here.
# A missing one fails the configure step naming the Debian package to install.

macro(cairn_require_package cmake_name debian_pkg)
  find_package(${cmake_name} ${ARGN} QUIET)
  if(NOT ${cmake_name}_FOUND)
    message(FATAL_ERROR
      "Cairn needs ${cmake_name}, which was not found. Install the Debian package "
      "'${debian_pkg}' (apt-get install --no-install-recommends ${debian_pkg}) or run "
      "scripts/install-deps.sh.")
  endif()
endmacro()

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "Cairn needs pkg-config. Install the Debian package 'pkg-config'.")
endif()

cairn_require_package(nlohmann_json nlohmann-json3-dev)
cairn_require_package(yaml-cpp libyaml-cpp-dev)
cairn_require_package(Boost libboost-graph-dev 1.74 COMPONENTS graph)
cairn_require_package(spdlog libspdlog-dev)
cairn_require_package(Catch2 catch2)
cairn_require_package(CLI11 libcli11-dev)
cairn_require_package(CURL libcurl4-openssl-dev)
cairn_require_package(SQLite3 libsqlite3-dev)
cairn_require_package(valijson libvalijson-dev)
cairn_require_package(OpenSSL libssl-dev)
# simdjson parses the JSON Cairn reads most of (API answers, listings, state
# rows: base/value.cc's ParseJson), twice as fast as nlohmann's parser; the
# values are still nlohmann's.
cairn_require_package(simdjson libsimdjson-dev)
cairn_require_package(Threads libc6-dev)
# prometheus-cpp's core library: the metrics of `cairn serve` and `cairn
# watch` (counters, gauges, histograms and the text exposition format). Its
# HTTP side (civetweb) is not used: /metrics is served by Beast.
cairn_require_package(prometheus-cpp prometheus-cpp-dev CONFIG)

pkg_check_modules(PQXX QUIET IMPORTED_TARGET libpqxx)
if(NOT PQXX_FOUND)
  message(FATAL_ERROR
    "Cairn needs libpqxx, which was not found. Install the Debian package 'libpqxx-dev' "
    "(apt-get install --no-install-recommends libpqxx-dev) or run scripts/install-deps.sh.")
endif()

# RE2 runs the regular expressions users write (regex(), regexall(),
# replace() with /re/): linear time whatever the pattern, which std::regex
# is not. Debian's libre2-dev has a pkg-config file and no CMake package.
pkg_check_modules(RE2 QUIET IMPORTED_TARGET re2)
if(NOT RE2_FOUND)
  message(FATAL_ERROR
    "Cairn needs RE2, which was not found. Install the Debian package 'libre2-dev' "
    "(apt-get install --no-install-recommends libre2-dev) or run scripts/install-deps.sh.")
endif()

# libyaml parses manifests (engine/manifest/yaml_tree.cc): six times faster
# than yaml-cpp's scanner, which took 60% of loading a stack; yaml-cpp still
# writes YAML. Debian's libyaml-dev has a pkg-config file and no CMake package.
pkg_check_modules(LIBYAML QUIET IMPORTED_TARGET yaml-0.1)
if(NOT LIBYAML_FOUND)
  message(FATAL_ERROR
    "Cairn needs libyaml, which was not found. Install the Debian package 'libyaml-dev' "
    "(apt-get install --no-install-recommends libyaml-dev) or run scripts/install-deps.sh.")
endif()

# libedit gives `cairn console` its line editing and history on a terminal
# (its readline interface); BSD-licensed, unlike GNU readline. Only the cli
# target links it. Debian's libedit-dev has a pkg-config file.
pkg_check_modules(LIBEDIT QUIET IMPORTED_TARGET libedit)
if(NOT LIBEDIT_FOUND)
  message(FATAL_ERROR
    "Cairn needs libedit, which was not found. Install the Debian package 'libedit-dev' "
    "(apt-get install --no-install-recommends libedit-dev) or run scripts/install-deps.sh.")
endif()

# mimalloc is the allocator of the executables (`cairn` and the benchmarks,
# which time what `cairn` does): with glibc's malloc, loading 100,000
# resources spent a quarter of its time allocating and freeing
# (malloc_consolidate and unlink_chunk alone took 15%); mimalloc takes a
# quarter off that load's CPU time and a tenth off its memory
# (docs/benchmarks.md). Linked, it replaces malloc and operator new for the
# whole process, the libraries' allocations included. Sanitizer and fuzz
# builds keep their runtimes' allocator, which must see every allocation.
# Debian's libmimalloc-dev has a CMake package (target `mimalloc`).
set(CAIRN_ALLOCATOR "mimalloc" CACHE STRING "The executables' allocator: mimalloc or system")
add_library(cairn_allocator INTERFACE)
if(CAIRN_ALLOCATOR STREQUAL "mimalloc" AND NOT CAIRN_SANITIZE AND NOT CAIRN_FUZZ)
  cairn_require_package(mimalloc libmimalloc-dev)
  target_link_libraries(cairn_allocator INTERFACE mimalloc)
elseif(NOT CAIRN_ALLOCATOR MATCHES "^(mimalloc|system)$")
  message(FATAL_ERROR "CAIRN_ALLOCATOR must be mimalloc or system, not '${CAIRN_ALLOCATOR}'")
endif()

# Beast/Asio come with the Boost headers (libboost-graph-dev pulls libboost1.74-dev).
if(NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/beast.hpp")
  message(FATAL_ERROR "Boost.Beast headers not found. Install the Debian package 'libboost-graph-dev'.")
endif()
