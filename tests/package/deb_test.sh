#!/usr/bin/env bash
# The Debian package as a user gets it (ctest "package: the .deb installs
# and runs"): cpack builds it from BUILD_DIR and it is unpacked into an
# empty directory tree. The cairn in it then runs in a mount namespace
# (unshare) where empty file systems cover SOURCE_DIR and BUILD_DIR, as on a
# machine that never built it: --version, `cairn schema`, a validate of
# examples/web, `cairn serve` with a plan and an apply of examples/quickstart
# against it, its man pages and its shell completions. Whatever the binary
# still read from either tree at run time (as the schemas once were) fails
# here. With ALLOCATOR mimalloc (the build's CAIRN_ALLOCATOR), the package
# depends on mimalloc's library and the installed cairn allocates through it.
#   tests/package/deb_test.sh SOURCE_DIR BUILD_DIR [ALLOCATOR]
# Needs unshare(1) and the right to mount: root, or user namespaces.
set -euo pipefail
src=$(realpath "$1")
build=$(realpath "$2")
allocator=${3:-system}
work=$(mktemp -d /tmp/cairn-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
case "$work/" in
  "$src"/* | "$build"/*) fail "the work directory $work is inside the trees to hide" ;;
esac

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/out/cairn_*.deb)
version=$(dpkg-deb -f "$deb" Version)
[ "$(dpkg-deb -f "$deb" Package)" = cairn ] || fail "package name"
dpkg-deb -f "$deb" Depends | grep -q libpqxx || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"
if [ "$allocator" = mimalloc ]; then
  dpkg-deb -f "$deb" Depends | grep -q libmimalloc ||
    fail "Depends lacks mimalloc's library: $(dpkg-deb -f "$deb" Depends)"
fi
dpkg-deb -x "$deb" "$work/root"
# The stacks the installed cairn is run on, copied out of the source tree
# before it is hidden.
cp -r "$src/examples/web" "$src/examples/quickstart" "$work/"

# Runs in the namespace: hides the trees, then checks the installed cairn.
installed_cairn_checks() {
  set -euo pipefail
  local src=$1 build=$2 work=$3 version=$4 allocator=$5
  fail() { echo "FAIL: $*" >&2; exit 1; }
  # The build tree first: it may lie inside the source tree.
  for dir in "$build" "$src"; do
    if [ -d "$dir" ]; then
      mount -t tmpfs -o size=64k,mode=0555 cairn-hidden "$dir" || fail "cannot hide $dir"
    fi
  done
  [ ! -e "$src/schemas" ] && [ ! -e "$src/CMakeLists.txt" ] && [ ! -e "$build/CMakeCache.txt" ] ||
    fail "the source and build trees are still visible"

  local root=$work/root cairn=$work/root/usr/bin/cairn
  cd "$work"
  [ "$("$cairn" --version)" = "cairn $version" ] || fail "cairn --version: $("$cairn" --version)"
  if [ "$allocator" = mimalloc ]; then
    # mimalloc prints its statistics at exit when asked: only if it is the
    # allocator that served the process.
    MIMALLOC_SHOW_STATS=1 "$cairn" --version 2>stats.out >/dev/null
    grep -q '^heap stats:' stats.out || { cat stats.out; fail "cairn does not allocate through mimalloc"; }
  fi
  "$cairn" schema >schema.out 2>&1 || { cat schema.out; fail "cairn schema"; }
  grep -q '^  volume ' schema.out || { cat schema.out; fail "cairn schema lists no volume kind"; }
  "$cairn" validate web >validate.out 2>&1 || { cat validate.out; fail "cairn validate examples/web"; }

  # The server and the engine together: serve, then plan and apply a stack.
  "$cairn" serve --listen 127.0.0.1:0 --data-dir "$work/data" --dev --provision-delay 0 \
    >serve.out 2>serve.log &
  local server=$!
  trap "kill -TERM $server 2>/dev/null || true" EXIT
  for _ in $(seq 600); do
    grep -q '^listening on ' serve.out && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^listening on ' serve.out || { cat serve.log; fail "cairn serve did not start"; }
  export CAIRN_ENDPOINT CAIRN_TOKEN
  CAIRN_ENDPOINT=$(sed -n 's/^listening on //p' serve.out)
  CAIRN_TOKEN=$(sed -n 's/^token: //p' serve.out)
  "$cairn" plan quickstart >plan.out 2>&1 || { cat plan.out; fail "cairn plan examples/quickstart"; }
  "$cairn" apply quickstart --auto-approve >apply.out 2>&1 ||
    { cat apply.out serve.log; fail "cairn apply examples/quickstart"; }
  "$cairn" plan quickstart --detailed-exitcode >replan.out 2>&1 ||
    { cat replan.out; fail "cairn plan after apply: changes left or an error"; }
  kill -TERM "$server"
  wait "$server" || fail "cairn serve did not stop cleanly: $(cat serve.log)"
  trap - EXIT

  # A man page per command of `cairn --help`, readable by man.
  for cmd in $("$cairn" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
    [ -s "$root/usr/share/man/man1/cairn-$cmd.1" ] || fail "no man page for $cmd"
  done
  head -1 "$root/usr/share/man/man1/cairn-plan.1" | grep -q '^\.TH CAIRN-PLAN 1' || fail "cairn-plan.1"

  # The installed bash completion completes a command (in an empty
  # directory: it offers file names too).
  mkdir "$work/empty"
  cd "$work/empty"
  [ -s "$root/usr/share/zsh/vendor-completions/_cairn" ] || fail "zsh completion"
  [ -s "$root/usr/share/fish/vendor_completions.d/cairn.fish" ] || fail "fish completion"
  local got
  got=$(bash -c 'source "$1"; COMP_WORDS=(cairn pla); COMP_CWORD=1; _cairn; echo "${COMPREPLY[*]}"' \
    _ "$root/usr/share/bash-completion/completions/cairn")
  [ "$got" = plan ] || fail "bash completion of 'cairn pla': '$got'"
}

# Root mounts in a new mount namespace; anyone else needs a user namespace
# too. Either way nothing outside the namespace sees the mounts.
sandbox=(unshare --mount)
[ "$(id -u)" -eq 0 ] || sandbox+=(--map-root-user)
"${sandbox[@]}" true 2>"$work/unshare.err" ||
  fail "cannot run in a mount namespace to hide the source and build trees: $(cat "$work/unshare.err")"
"${sandbox[@]}" bash -c "$(declare -f installed_cairn_checks); installed_cairn_checks \"\$@\"" \
  _ "$src" "$build" "$work" "$version" "$allocator"
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) installs and runs without its source and build trees"
