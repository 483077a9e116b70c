#!/usr/bin/env bash
# Configures the project with one dependency hidden from CMake and checks that
# configure fails naming the Debian package to install.
# Usage: missing_package.sh SOURCE_DIR CMAKE_PACKAGE DEBIAN_PACKAGE
set -u
src=$1 pkg=$2 deb=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(cmake -S "$src" -B "$tmp" -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=OFF \
  "-DCMAKE_DISABLE_FIND_PACKAGE_${pkg}=TRUE" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then echo "configure succeeded without $pkg"; exit 1; fi
if ! grep -q "$deb" <<<"$out"; then echo "configure failed without naming $deb:"; echo "$out"; exit 1; fi
echo "configure failed as expected, naming $deb"
