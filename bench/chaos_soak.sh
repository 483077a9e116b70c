#!/usr/bin/env bash
# Chaos soak, long form (issue 16): the ctest "chaos soak" case
# (tests/cli/chaos_soak_test.cc) with many cycles. Each cycle applies and
# destroys the crash stack against `cairn serve --faults ...` while the
# command, the server or both are killed with SIGKILL at a random moment;
# then checks, through the API, that every desired resource exists exactly
# once (after apply) or nothing does (after destroy), and that the state
# matches. Prints the counts.
#
#   bench/chaos_soak.sh [BUILD_DIR] [CYCLES] [SEED]     (defaults: build, 30, random)
set -euo pipefail
build=${1:-build}
export CAIRN_SOAK_CYCLES=${2:-30}
[ -n "${3:-}" ] && export CAIRN_SOAK_SEED=$3
start=$SECONDS
"$build/tests/cli_tests" "chaos soak:*"
echo "took $((SECONDS - start)) s"
