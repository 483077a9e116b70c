#!/bin/sh
# Bounded fuzzing of the manifest loader (see tests/fuzz/CMakeLists.txt).
#   run_fuzz.sh SOURCE_DIR BUILD_DIR
# Builds the libFuzzer target with clang++ and ASan/UBSan in BUILD_DIR,
# replays every saved regression input, then fuzzes for CAIRN_FUZZ_SECONDS
# (default 30) from a seed corpus of the example and test manifests.
# Exit 77 (skipped) when clang++ is absent; 1 on a crash, whose input is
# left in BUILD_DIR/artifacts/ (copy it to tests/fuzz/regressions/).
set -eu
src=$1
out=$2
seconds=${CAIRN_FUZZ_SECONDS:-30}
if ! command -v clang++ >/dev/null 2>&1; then
  echo "clang++ not found: skipping the fuzz run"
  exit 77
fi
cmake -S "$src" -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  -DCAIRN_FUZZ=ON -DCAIRN_SANITIZE=address,undefined -DCAIRN_BUILD_BENCH=OFF >"$out.configure.log" 2>&1 ||
  { cat "$out.configure.log"; exit 1; }
cmake --build "$out" --target manifest_loader_fuzz -j2 >"$out.build.log" 2>&1 ||
  { tail -50 "$out.build.log"; exit 1; }
fuzzer=$out/tests/fuzz/manifest_loader_fuzz
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds" "$out/corpus" "$out/artifacts"
i=0
for f in $(find "$src/examples" "$src/tests/engine/manifest/invalid" -name '*.yaml' | sort); do
  i=$((i + 1))
  cp "$f" "$seeds/seed$i.yaml"
done
regressions=$(find "$src/tests/fuzz/regressions" -type f ! -name README.md | sort)
if [ -n "$regressions" ]; then
  echo "replaying $(echo "$regressions" | wc -l) regression inputs"
  # shellcheck disable=SC2086
  "$fuzzer" -runs=0 $regressions
fi
exec "$fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" "$seeds"
