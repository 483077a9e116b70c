#!/usr/bin/env bash
# Prints the major version of the installed clang (14 on Debian 12), so that
# scripts install and use the LLVM tools of that version rather than one
# hard-coded. Fails when clang is missing.
set -euo pipefail
v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n1)
if [ -z "$v" ]; then
  echo "llvm-version: clang is not installed" >&2
  exit 1
fi
echo "$v"
