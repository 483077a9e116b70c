#!/usr/bin/env bash
# A long random fuzzing run, for people and nightly jobs (CI runs the
# deterministic bounded runs through ctest instead; docs/testing.md).
#   scripts/fuzz.sh TARGET MINUTES
# TARGET is one of tests/fuzz/CMakeLists.txt's CAIRN_FUZZERS (server_api,
# manifest_loader, ...). Builds the clang ASan/UBSan fuzz tree in
# build/fuzz-clang when needed (CAIRN_BUILD_DIR moves build/), replays the
# regressions, then fuzzes for MINUTES, keeping what it learns in
# build/fuzz-clang/corpus/TARGET/ for the next run. A failing input is left
# in build/fuzz-clang/artifacts/TARGET/: copy it to
# tests/fuzz/regressions/TARGET/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET MINUTES" >&2
  exit 2
fi
target=$1
minutes=$2
tree=${CAIRN_BUILD_DIR:-build}/fuzz-clang
CAIRN_LLVM=1 scripts/install-deps.sh
tests/fuzz/run_fuzz.sh build "$(pwd)" "$tree" "${target}_fuzz"
tests/fuzz/run_fuzz.sh run "$(pwd)" "$tree" "$target" $((minutes * 60))
