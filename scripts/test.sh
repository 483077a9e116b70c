#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: what CI runs
# (.ci/run), and docs/testing.md says what each step covers and costs.
#
#   1. scripts/install-deps.sh, with what only the tests need: clang and the
#      LLVM runtimes of its version (libFuzzer, the sanitizers,
#      llvm-symbolizer), chromium (headless, for the HTML plan report test),
#      libxml2-utils (xmllint, which parses the JUnit XML reports in tests),
#      Spectral pinned by tools/spectral/package-lock.json (the OpenAPI lint)
#   2. the Release build (g++, -Werror, unity) in build/: `cairn` and the
#      benchmarks, what users and the package run
#   3. the clang tree build/fuzz-clang, ASan+UBSan, lock annotations checked
#      (-Wthread-safety -Werror): every fuzz target and every test
#   4. ctest in build/: what needs the Release tree (the deterministic fuzz
#      runs, the .deb, the OpenAPI lint, layering, format and build checks)
#   5. scripts/test-sanitizers.sh: every other test, the whole suite, under
#      ASan+UBSan; the concurrency tests under TSan
#
# Every test runs once (a failing one twice, see run_ctest), under the
# sanitizers where it can: running the suite in Release as well doubled the
# build and the run for nothing the sanitizer run does not see.
#
# Usage: scripts/test.sh [ctest args...]. With ctest arguments (say
# `-R server:`) the whole Release tree is built and ctest runs them there,
# the sanitizer runs left out, which the script says; CI passes none. Exits
# non-zero if any step fails, after running every step it can.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
CAIRN_LLVM=1 CAIRN_NODE_TOOLS=1 CAIRN_EXTRA_PACKAGES="${CAIRN_EXTRA_PACKAGES:-} chromium libxml2-utils" \
  scripts/install-deps.sh

failed=()
rm -f build/Testing/Temporary/LastTestsFailed.log build/fuzz-clang/Testing/Temporary/LastTestsFailed.log \
  build/tsan/Testing/Temporary/LastTestsFailed.log
# step NAME COMMAND...: runs it, prints how long it took, records a failure.
step() {
  local name=$1 t=$SECONDS
  shift
  echo "test.sh: $name"
  if "$@"; then
    echo "test.sh: $name took $((SECONDS - t)) s"
  else
    echo "test.sh: $name FAILED after $((SECONDS - t)) s"
    failed+=("$name")
  fi
}

# A test that fails is run once more (its first output is printed whole), so
# that a test timing out on a loaded 2-core machine does not sink the run;
# every test that needed the second run is named at the end, as flaky, and
# a test failing twice fails CI.
ctest_log=$(mktemp)
trap 'rm -f "$ctest_log"' EXIT
# run_ctest TREE [ctest args...]
run_ctest() {
  local tree=$1
  shift
  env CAIRN_REQUIRE_CLANG=1 ctest --test-dir "$tree" --output-on-failure -j"$(nproc)" \
    --repeat until-pass:2 "$@" 2>&1 | tee -a "$ctest_log"
  return "${PIPESTATUS[0]}"
}

# Every tree is a unity build (CAIRN_UNITY_BUILD, docs/testing.md): a third
# less build time.
release_args="-DCAIRN_UNITY_BUILD=ON ${CAIRN_CMAKE_ARGS:-}"
if [ $# -gt 0 ]; then
  step "Release build" env CAIRN_CMAKE_ARGS="$release_args" scripts/build.sh build Release
  if [ ${#failed[@]} -gt 0 ]; then exit 1; fi
  step "clang ASan/UBSan tree (fuzzers, tests, lock annotations)" \
    tests/fuzz/run_fuzz.sh build "$(pwd)" build/fuzz-clang all
  step "ctest" run_ctest build "$@"
  echo "test.sh: ctest arguments given: the sanitizer runs are left out (scripts/test-sanitizers.sh runs them)"
else
  step "Release build (cairn, benchmarks)" env CAIRN_CMAKE_ARGS="$release_args" \
    scripts/build.sh build Release cairn cairn_share cairn_benchmarks
  if [ ${#failed[@]} -gt 0 ]; then exit 1; fi
  step "clang ASan/UBSan tree (fuzzers, tests, lock annotations)" \
    tests/fuzz/run_fuzz.sh build "$(pwd)" build/fuzz-clang all
  step "ctest in build/ (fuzz, package, OpenAPI, layering, build checks)" \
    run_ctest build -R '^(fuzz|package|openapi|layering|build):'
  step "sanitizers (the whole suite under ASan/UBSan, concurrency under TSan)" \
    env CAIRN_CTEST_LOG="$ctest_log" scripts/test-sanitizers.sh asan tsan
fi
echo "test.sh: finished in $((SECONDS - start)) s"
# What went wrong, last, where a log's tail shows it. Flaky: failed once,
# then passed (ctest's lists of failures hold the rest).
failed_once=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*' "$ctest_log" |
  sed -E 's/^.*Test +#[0-9]+: //; s/ \.{3,}.*$//' | sort -u || true)
failed_twice=$(cat build/Testing/Temporary/LastTestsFailed.log \
  build/fuzz-clang/Testing/Temporary/LastTestsFailed.log 2>/dev/null |
  sed -E 's/^[0-9]+://' | sort -u || true)
flaky=$(comm -23 <(echo "$failed_once") <(echo "$failed_twice") | sed '/^$/d')
if [ -n "$flaky" ]; then
  echo "test.sh: FLAKY, failed once and passed when run again:"
  echo "$flaky" | sed 's/^/  /'
fi
for tree in build build/fuzz-clang build/tsan; do
  if [ -s "$tree/Testing/Temporary/LastTestsFailed.log" ]; then
    echo "test.sh: failing tests in $tree:"
    sed 's/^/  /' "$tree/Testing/Temporary/LastTestsFailed.log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: failed: ${failed[*]}"
  exit 1
fi
