#!/usr/bin/env bash
# The lock annotations are checked, not decoration: clang with the flags the
# build uses for them (CMakeLists.txt, CAIRN_THREAD_SAFETY) must refuse a
# member read without its GUARDED_BY mutex, a REQUIRES function called
# without the mutex, a write or wait after a MutexUnlockableLock let go, and
# accept the same code with it held.
# Then the clang tree scripts/test.sh builds (build/fuzz-clang) must have
# compiled every source with those flags.
# Usage: thread_safety_check.sh SOURCE_DIR CLANG_TREE
set -u
src=$1
tree=$2
if ! command -v clang++ >/dev/null 2>&1; then
  echo "clang++ not found (scripts/test.sh installs it)"
  [ "${CAIRN_REQUIRE_CLANG:-0}" = 1 ] && exit 1
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Werror=thread-safety -I "$src")

# compile NAME EXPECT BODY: EXPECT is ok or refused.
failures=0
compile() {
  local name=$1 expect=$2 body=$3
  printf '#include "base/mutex.h"\n%s\n' "$body" >"$tmp/$name.cc"
  if clang++ "${flags[@]}" "$tmp/$name.cc" >"$tmp/$name.log" 2>&1; then got=ok; else got=refused; fi
  if [ "$got" = "$expect" ]; then
    echo "ok: $name ($got)"
  else
    echo "FAIL: $name: expected $expect, got $got"
    cat "$tmp/$name.log"
    failures=$((failures + 1))
  fi
}

compile guarded-read-with-lock ok '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  int Get() { cairn::MutexLock l(mu); return n; } };'
compile guarded-read-without-lock refused '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  int Get() { return n; } };'
compile requires-called-without-lock refused '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  void Bump() REQUIRES(mu) { ++n; }
  void Run() { Bump(); } };'
compile requires-called-with-lock ok '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  void Bump() REQUIRES(mu) { ++n; }
  void Run() { cairn::MutexLock l(mu); Bump(); } };'
compile wait-predicate-holds-the-lock ok '
struct C { cairn::Mutex mu; cairn::CondVar cv; bool done GUARDED_BY(mu) = false;
  void Wait() { cairn::MutexLock l(mu); cv.Wait(mu, [&]() REQUIRES(mu) { return done; }); } };'
compile relockable-lock-taken-again ok '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  void Set() { cairn::MutexUnlockableLock l(mu); l.Unlock(); l.Lock(); n = 1; } };'
compile relockable-lock-write-after-unlock refused '
struct C { cairn::Mutex mu; int n GUARDED_BY(mu) = 0;
  void Set() { cairn::MutexUnlockableLock l(mu); l.Unlock(); n = 1; } };'
compile relockable-lock-wait-after-unlock refused '
struct C { cairn::Mutex mu; cairn::CondVar cv; bool done GUARDED_BY(mu) = false;
  void Wait() { cairn::MutexUnlockableLock l(mu); l.Unlock();
    cv.Wait(mu, [&]() REQUIRES(mu) { return done; }); } };'
compile relockable-lock-unlocked-twice refused '
struct C { cairn::Mutex mu;
  void Run() { cairn::MutexUnlockableLock l(mu); l.Unlock(); l.Unlock(); } };'
compile shared-write-under-reader-lock refused '
struct C { cairn::SharedMutex mu; int n GUARDED_BY(mu) = 0;
  void Set() { cairn::ReaderMutexLock l(mu); n = 1; } };'

commands=$tree/compile_commands.json
if [ -f "$commands" ]; then
  total=$(grep -c '"command"' "$commands")
  checked=$(grep '"command"' "$commands" | grep -c -- '-Wthread-safety -Werror=thread-safety')
  if [ "$total" -gt 0 ] && [ "$checked" -eq "$total" ]; then
    echo "ok: all $total compile commands of $tree check the annotations"
  else
    echo "FAIL: $checked of $total compile commands of $tree check the annotations"
    failures=$((failures + 1))
  fi
elif [ "${CAIRN_REQUIRE_CLANG:-0}" = 1 ]; then
  echo "FAIL: $commands is missing: scripts/test.sh builds that tree first"
  failures=$((failures + 1))
else
  echo "note: $commands not built yet; only the snippets were checked"
fi
[ $failures -eq 0 ] || exit 1
