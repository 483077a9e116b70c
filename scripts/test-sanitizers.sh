#!/usr/bin/env bash
# The sanitizer runs, a step of scripts/test.sh and so of every CI run;
# docs/testing.md says what each part covers and costs.
#
#   asan  AddressSanitizer, LeakSanitizer and UBSan (-DCAIRN_SANITIZE=
#         address,undefined, clang): the whole ctest suite, in the clang
#         tree the ctest "fuzz: build" made for the fuzz targets
#         (BUILD_DIR/fuzz-clang), whose libraries it reuses; configured and
#         built here when the fuzz tests have not run first.
#   tsan  ThreadSanitizer (-DCAIRN_SANITIZE=thread, clang) in BUILD_DIR/tsan:
#         every engine, providers and server test, which hold the
#         concurrency tests (parallel apply, the state journal's group
#         commit, the readiness watchers, cairn serve under concurrent
#         clients, itself built with TSan), and `cairn test --parallelism`.
#
# Usage: scripts/test-sanitizers.sh [asan] [tsan]   (default: both)
# BUILD_DIR is CAIRN_BUILD_DIR or build. Exits non-zero on any failure,
# sanitizer report included: every one stops its process.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${CAIRN_BUILD_DIR:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(asan tsan)
jobs=$(nproc)

CAIRN_LLVM=1 scripts/install-deps.sh
# Readable stacks in every report: the symbolizer of the installed LLVM.
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-$(scripts/llvm-version.sh)/bin/llvm-symbolizer
export TSAN_OPTIONS_SYMBOLIZER="external_symbolizer_path=$ASAN_SYMBOLIZER_PATH"

# Prints how long a step took, for docs/testing.md's table; a failure is
# recorded and the other runs still made (the exit status says it).
status=0
step() {
  local name=$1 start=$SECONDS
  shift
  echo "test-sanitizers: $name"
  if "$@"; then
    echo "test-sanitizers: $name took $((SECONDS - start)) s"
  else
    echo "test-sanitizers: $name FAILED after $((SECONDS - start)) s"
    status=1
  fi
}

configure_and_build_asan() {
  # The fuzz tree is exactly this configuration (tests/fuzz/run_fuzz.sh):
  # ASan+UBSan, the libraries also instrumented for libFuzzer's coverage.
  # scripts/test.sh built it whole already; then this is a quick no-op.
  tests/fuzz/run_fuzz.sh build "$src" "$build/fuzz-clang" all
}

# Every test but those of the Release tree alone (scripts/test.sh runs
# them there: the .deb, the OpenAPI lint, layering, format and build
# checks). A test that fails runs once more, as in scripts/test.sh, which
# names it as flaky (CAIRN_CTEST_LOG collects the output for that): a
# sanitizer report is deterministic for the code it runs, a timeout on a
# loaded machine is not.
run_asan() {
  (cd "$build/fuzz-clang" &&
    ASAN_OPTIONS=detect_leaks=1:strict_init_order=1:check_initialization_order=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure -j"$jobs" --repeat until-pass:2 \
      -E '^(package|openapi|layering|build):' 2>&1 | tee -a "${CAIRN_CTEST_LOG:-/dev/null}"
    exit "${PIPESTATUS[0]}")
}

configure_and_build_tsan() {
  cmake -S "$src" -B "$build/tsan" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCAIRN_SANITIZE=thread \
    -DCAIRN_BUILD_BENCH=OFF -DCAIRN_WERROR=OFF -DCAIRN_UNITY_BUILD=ON \
    >"$build/tsan.configure.log" 2>&1 ||
    { cat "$build/tsan.configure.log"; return 1; }
  # Only what the run below needs: the cli tests are the ASan run's.
  cmake --build "$build/tsan" -j"$jobs" --target cairn base_tests engine_tests providers_tests server_tests \
    >"$build/tsan.build.log" 2>&1 || { tail -50 "$build/tsan.build.log"; return 1; }
}

run_tsan() {
  # Catch2 v2's assertion counters are not thread-safe, and a few tests
  # assert from worker threads: races inside Catch are the framework's, not
  # the code's under test. spdlog's registry is made on first use inside
  # libspdlog.so, which is not instrumented, so TSan misses the guard of
  # that static and reports a logger read on another thread as racing with
  # its construction (a test whose threads log before the main thread did).
  cat >"$build/tsan/tsan.supp" <<'EOF'
race:Catch::
race:spdlog::details::registry::registry
EOF
  # halt_on_error: a race in a `cairn serve` child kills it, which fails
  # the test talking to it. setarch -R: LLVM 14's TSan cannot map its
  # shadow memory under kernels with 32 bits of mmap randomisation.
  (cd "$build/tsan" &&
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$build/tsan/tsan.supp $TSAN_OPTIONS_SYMBOLIZER" \
      setarch "$(uname -m)" -R ctest --output-on-failure -j"$jobs" -R '^(base|engine|providers|server):')
  # `cairn test --parallelism` runs test files on threads of one process,
  # each file with a `cairn serve` of its own in that process: the example
  # files, two at once, under TSan.
  (cd "$build/tsan" &&
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$build/tsan/tsan.supp $TSAN_OPTIONS_SYMBOLIZER" \
      setarch "$(uname -m)" -R cli/cairn test "$src/examples/testing" --parallelism 2 \
      </dev/null >tsan-cairn-test.log 2>&1) ||
    { cat "$build/tsan/tsan-cairn-test.log"; return 1; }
}

for part in "${parts[@]}"; do
  case $part in
    asan)
      step "ASan/UBSan build" configure_and_build_asan
      step "ASan/UBSan tests" run_asan
      ;;
    tsan)
      step "TSan build" configure_and_build_tsan
      step "TSan tests" run_tsan
      ;;
    *)
      echo "usage: scripts/test-sanitizers.sh [asan] [tsan]" >&2
      exit 1
      ;;
  esac
done
exit $status
