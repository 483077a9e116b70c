#!/usr/bin/env bash
# One format: every C++ source of the project matches .clang-format
# (clang-format --dry-run -Werror). To fix what it lists:
#   clang-format -i $(git ls-files '*.cc' '*.h' '*.cc.in')
# Usage: format_check.sh SOURCE_DIR
set -u
cd "$1" || exit 1
if ! command -v clang-format >/dev/null 2>&1; then
  echo "clang-format not found (scripts/test.sh installs it)"
  [ "${CAIRN_REQUIRE_CLANG:-0}" = 1 ] && exit 1
  exit 77
fi
# The sources, from git when this is a checkout (what is committed or
# staged), otherwise from the tree.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find base engine providers server cli tests bench -name '*.cc' -o -name '*.h')
fi
if [ ${#files[@]} -eq 0 ]; then echo "no sources found"; exit 1; fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "${#bad[@]} of ${#files[@]} sources differ from .clang-format:"
  printf '  %s\n' "${bad[@]}"
  echo "fix: clang-format -i ${bad[*]}"
  exit 1
fi
echo "all ${#files[@]} sources match .clang-format"
