#!/usr/bin/env bash
# Configures and builds Cairn.
# Usage: scripts/build.sh [BUILD_DIR] [BUILD_TYPE] [TARGET...]   (default: everything)
# Extra CMake arguments come from CAIRN_CMAKE_ARGS (e.g. -DCAIRN_SANITIZE=address,undefined).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
BUILD_TYPE=${2:-Release}
TARGETS=("${@:3}")
read -r -a EXTRA_ARGS <<<"${CAIRN_CMAKE_ARGS:-}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${EXTRA_ARGS[@]}" >/dev/null
if [ ${#TARGETS[@]} -gt 0 ]; then
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target "${TARGETS[@]}"
else
  cmake --build "$BUILD_DIR" -j"$(nproc)"
fi
