#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test with ctest.
# Exits non-zero on any failure. Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build Release
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
