#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test with ctest.
# Exits non-zero on any failure. Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
# What only the tests need besides the build: chromium, headless, to render
# the HTML plan report (tests/cli/plan_html_test.cc).
CAIRN_EXTRA_PACKAGES="${CAIRN_EXTRA_PACKAGES:-} chromium" scripts/install-deps.sh
scripts/build.sh build Release
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
