#!/usr/bin/env bash
# ctest "openapi: Spectral lint": schemas/openapi.yaml linted with Spectral's
# OpenAPI ruleset (.spectral.yaml), failing on any error. Spectral is pinned
# by tools/spectral/package-lock.json and installed by
# `CAIRN_NODE_TOOLS=1 scripts/install-deps.sh` (scripts/test.sh does it):
# this test never reaches a registry.
#   tests/openapi/spectral_lint.sh SOURCE_DIR
set -euo pipefail
src=$1
spectral=$src/tools/spectral/node_modules/.bin/spectral
if [ ! -x "$spectral" ]; then
  echo "Spectral is not installed: run CAIRN_NODE_TOOLS=1 scripts/install-deps.sh" >&2
  exit 1
fi
"$spectral" --version
"$spectral" lint "$src/schemas/openapi.yaml" --ruleset "$src/.spectral.yaml" --fail-severity error
