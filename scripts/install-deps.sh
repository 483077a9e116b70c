#!/usr/bin/env bash
# Installs Cairn's build and test dependencies from Debian's packages.
# Idempotent: installs only what is missing, and runs `apt-get update` only
# when something must be installed. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config
  nlohmann-json3-dev libyaml-cpp-dev libboost-graph-dev libspdlog-dev catch2
  libcli11-dev libcurl4-openssl-dev libsqlite3-dev libpqxx-dev libvalijson-dev libssl-dev
  postgresql curl
)
# Extra packages a caller needs (e.g. CAIRN_EXTRA_PACKAGES="postgresql clang").
read -r -a EXTRA <<<"${CAIRN_EXTRA_PACKAGES:-}"
PACKAGES+=("${EXTRA[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  [ -z "$p" ] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
