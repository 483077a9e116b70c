#!/usr/bin/env bash
# Installs Cairn's build and test dependencies from Debian's packages.
# Idempotent: installs only what is missing, and runs `apt-get update` only
# when something must be installed. Run as root (or with sudo available).
#
# What a caller adds (scripts/test.sh sets all three):
#   CAIRN_EXTRA_PACKAGES="a b"  more Debian packages (e.g. chromium)
#   CAIRN_LLVM=1                clang and clang-format, and for the LLVM
#                               version that clang is
#                               (not a hard-coded one): libclang-rt-N-dev
#                               (libFuzzer, the sanitizer runtimes) and
#                               llvm-N (llvm-symbolizer, readable reports)
#   CAIRN_NODE_TOOLS=1          the Node.js tools the tests run, pinned by a
#                               committed lockfile: Spectral, from
#                               tools/spectral/package-lock.json with
#                               `npm ci` (install scripts off), again only
#                               when the lockfile changed. npm comes from
#                               Debian unless Node.js is there already.
# No test reaches a registry itself: everything is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config
  nlohmann-json3-dev libyaml-dev libyaml-cpp-dev libboost-graph-dev libspdlog-dev catch2
  libcli11-dev libcurl4-openssl-dev libsqlite3-dev libpqxx-dev libvalijson-dev libssl-dev
  libre2-dev libedit-dev libmimalloc-dev prometheus-cpp-dev libsimdjson-dev
  postgresql curl
)
read -r -a EXTRA <<<"${CAIRN_EXTRA_PACKAGES:-}"
PACKAGES+=("${EXTRA[@]}")
[ "${CAIRN_LLVM:-0}" = 1 ] && PACKAGES+=(clang clang-format)
[ "${CAIRN_NODE_TOOLS:-0}" = 1 ] && ! command -v npm >/dev/null && PACKAGES+=(npm)

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi

# install_missing PACKAGE...: apt-get install of those not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    [ -z "$p" ] && continue
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all $# packages already installed"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    return 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

install_node_tools() {
  local dir=tools/spectral stamp=tools/spectral/node_modules/.cairn-lock.sha256 want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "install-deps: Spectral already installed from its lockfile"
    return 0
  fi
  echo "install-deps: npm ci in $dir"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

install_missing "${PACKAGES[@]}"
if [ "${CAIRN_LLVM:-0}" = 1 ]; then
  llvm=$(scripts/llvm-version.sh)
  install_missing "libclang-rt-$llvm-dev" "llvm-$llvm"
fi
if [ "${CAIRN_NODE_TOOLS:-0}" = 1 ]; then install_node_tools; fi
