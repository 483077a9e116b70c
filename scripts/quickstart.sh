#!/usr/bin/env bash
# Quickstart: installs dependencies, builds Cairn (Release), and runs what is
# built so far.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build Release
CAIRN=build/cli/cairn
"$CAIRN" --version
echo "quickstart: the server (cairn serve) and the engine commands are not built yet."
