#!/usr/bin/env bash
# The Debian package as a user gets it (ctest "package: the .deb installs
# and runs"): cpack builds it from BUILD_DIR, it is unpacked into an empty
# directory tree, and the cairn in it must run on its own: --version, a
# validate of examples/web, its man pages and its bash completion.
#   tests/package/deb_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d /tmp/cairn-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/out/cairn_*.deb)
version=$(dpkg-deb -f "$deb" Version)
[ "$(dpkg-deb -f "$deb" Package)" = cairn ] || fail "package name"
dpkg-deb -f "$deb" Depends | grep -q libpqxx || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"

root=$work/root
dpkg-deb -x "$deb" "$root"
cairn=$root/usr/bin/cairn
[ "$("$cairn" --version)" = "cairn $version" ] || fail "cairn --version: $("$cairn" --version)"
(cd "$work" && "$cairn" validate "$src/examples/web") >"$work/validate.out" 2>&1 ||
  { cat "$work/validate.out"; fail "cairn validate examples/web"; }

# A man page per command of `cairn --help`, readable by man.
for cmd in $("$cairn" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
  [ -s "$root/usr/share/man/man1/cairn-$cmd.1" ] || fail "no man page for $cmd"
done
head -1 "$root/usr/share/man/man1/cairn-plan.1" | grep -q '^\.TH CAIRN-PLAN 1' || fail "cairn-plan.1"

# The installed bash completion completes a command.
[ -s "$root/usr/share/zsh/vendor-completions/_cairn" ] || fail "zsh completion"
[ -s "$root/usr/share/fish/vendor_completions.d/cairn.fish" ] || fail "fish completion"
got=$(bash -c 'source "$1"; COMP_WORDS=(cairn pla); COMP_CWORD=1; _cairn; echo "${COMPREPLY[*]}"' \
  _ "$root/usr/share/bash-completion/completions/cairn")
[ "$got" = plan ] || fail "bash completion of 'cairn pla': '$got'"
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) installs and runs"
