#!/bin/sh
# Fuzzing (see tests/fuzz/CMakeLists.txt and docs/testing.md).
#   run_fuzz.sh build SOURCE_DIR BUILD_DIR [TARGET...]
#       configures BUILD_DIR with clang++, CAIRN_FUZZ=ON and ASan/UBSan and
#       builds TARGETs (default: every fuzz target, cairn_fuzzers).
#       scripts/test.sh builds this tree whole (the fuzzers, and the tests
#       the ASan/UBSan run takes from it) before any test runs.
#   run_fuzz.sh ci SOURCE_DIR BUILD_DIR NAME RUNS
#       what ctest runs, deterministic: replays every input in
#       tests/fuzz/regressions/NAME/ and every seed, then fuzzes NAME_fuzz
#       from the seeds alone (a fresh corpus, nothing kept from earlier
#       runs) with -seed=1 and -runs=RUNS, so a commit always passes or
#       always fails. CAIRN_FUZZ_RUNS overrides RUNS.
#   run_fuzz.sh run SOURCE_DIR BUILD_DIR NAME SECONDS
#       a long random run (scripts/fuzz.sh): fuzzes for SECONDS from the
#       seeds and what earlier runs kept in BUILD_DIR/corpus/NAME/.
# Exit 77 (skipped) when clang++ is absent, or when the tree was not built
# and CAIRN_REQUIRE_CLANG is not 1 (scripts/test.sh sets it, so CI never
# skips); non-zero on any crash, leak, timeout (an input running over 10 s)
# or out-of-memory, whose input is left in BUILD_DIR/artifacts/NAME/ (copy
# it to tests/fuzz/regressions/NAME/).
set -eu
mode=$1
src=$2
out=$3
if ! command -v clang++ >/dev/null 2>&1; then
  echo "clang++ not found: skipping (scripts/test.sh installs clang)"
  exit 77
fi

if [ "$mode" = build ]; then
  shift 3
  targets=${*:-cairn_fuzzers}
  mkdir -p "$out"
  cmake -S "$src" -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
    -DCAIRN_FUZZ=ON -DCAIRN_SANITIZE=address,undefined -DCAIRN_BUILD_BENCH=OFF -DCAIRN_WERROR=OFF \
    -DCAIRN_UNITY_BUILD=ON \
    ${CAIRN_FUZZ_CMAKE_ARGS:-} >"$out.configure.log" 2>&1 || { cat "$out.configure.log"; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$out" -j"$(nproc)" --target $targets >"$out.build.log" 2>&1 ||
    { tail -50 "$out.build.log"; exit 1; }
  echo "built $targets in $out"
  exit 0
fi

name=$4
fuzzer=$out/tests/fuzz/${name}_fuzz
if [ ! -x "$fuzzer" ]; then
  echo "$fuzzer is missing: build it with tests/fuzz/run_fuzz.sh build (scripts/test.sh does)"
  if [ "${CAIRN_REQUIRE_CLANG:-0}" = 1 ]; then exit 1; fi
  exit 77
fi
seeds=$out/seeds/$name
rm -rf "$seeds"
mkdir -p "$seeds" "$out/artifacts/$name"
if [ -d "$src/tests/fuzz/seeds/$name" ]; then
  cp "$src/tests/fuzz/seeds/$name"/* "$seeds/"
fi
if [ "$name" = manifest_loader ]; then
  i=0
  for f in $(find "$src/examples" "$src/tests/engine/manifest/invalid" -name '*.yaml' | sort); do
    i=$((i + 1))
    cp "$f" "$seeds/seed$i.yaml"
  done
fi

# The largest seed must fit whole (the server's nesting seed is 110 KB):
# libFuzzer cuts corpus inputs to -max_len.
max_len=4096
for f in "$seeds"/*; do
  [ -f "$f" ] || continue
  n=$(wc -c <"$f")
  if [ "$n" -gt "$max_len" ]; then max_len=$n; fi
done

# libFuzzer's own exit code for a crash is 77, which ctest would take for
# "skipped": every failure exits 1 instead.
limits="-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1"
regressions=$(find "$src/tests/fuzz/regressions/$name" -type f 2>/dev/null | sort)
if [ -n "$regressions" ]; then
  echo "replaying $(echo "$regressions" | wc -l) regression inputs"
  # shellcheck disable=SC2086
  "$fuzzer" -runs=0 $limits $regressions
fi

if [ "$mode" = ci ]; then
  runs=${CAIRN_FUZZ_RUNS:-$5}
  corpus=$out/ci-corpus/$name
  rm -rf "$corpus"
  mkdir -p "$corpus"
  # The seeds are read first (every one is run once), then RUNS inputs made
  # from them; -seed fixes libFuzzer's random choices.
  # shellcheck disable=SC2086
  exec "$fuzzer" -seed=1 -runs="$runs" -max_len="$max_len" $limits \
    -artifact_prefix="$out/artifacts/$name/" -print_final_stats=1 "$corpus" "$seeds"
fi

seconds=$5
mkdir -p "$out/corpus/$name"
# shellcheck disable=SC2086
exec "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" $limits \
  -artifact_prefix="$out/artifacts/$name/" -print_final_stats=1 "$out/corpus/$name" "$seeds"
