#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test with ctest.
# Exits non-zero on any failure. Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
# What only the tests need besides the build: clang with libFuzzer, the
# sanitizer runtimes (libclang-rt, which clang only recommends) and
# llvm-symbolizer, for the fuzz tests (docs/testing.md); chromium, headless,
# to render the HTML plan report (tests/cli/plan_html_test.cc); npm, to
# install Spectral for the OpenAPI lint (tests/openapi/spectral_lint.sh),
# unless Node.js is there already (from another source than Debian's).
extra="clang libclang-rt-14-dev llvm-14 chromium"
command -v npm >/dev/null || extra+=" npm"
CAIRN_EXTRA_PACKAGES="${CAIRN_EXTRA_PACKAGES:-} $extra" scripts/install-deps.sh
scripts/build.sh build Release
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
