#!/usr/bin/env bash
# ctest "openapi: Spectral lint": schemas/openapi.yaml linted with Spectral's
# OpenAPI ruleset (.spectral.yaml), failing on any error. Spectral comes from
# npm (@stoplight/spectral-cli), installed once into BUILD_DIR/tools/spectral.
#   tests/openapi/spectral_lint.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tools=$build/tools/spectral
spectral=$tools/node_modules/.bin/spectral
if [ ! -x "$spectral" ]; then
  command -v npm >/dev/null || { echo "npm is missing: scripts/test.sh installs it" >&2; exit 1; }
  mkdir -p "$tools"
  npm install --no-audit --no-fund --prefix "$tools" @stoplight/spectral-cli@6 >"$tools/npm.log" 2>&1 ||
    { cat "$tools/npm.log" >&2; exit 1; }
fi
"$spectral" --version
"$spectral" lint "$src/schemas/openapi.yaml" --ruleset "$src/.spectral.yaml" --fail-severity error
