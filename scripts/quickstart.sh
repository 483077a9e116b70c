#!/usr/bin/env bash
# Quickstart: installs dependencies, builds Cairn (Release), starts a local
# `cairn serve`, and runs examples/quickstart end to end against it:
# validate, plan, apply, a second plan with nothing to do, drift after a
# change made directly through the API, destroy. Then stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build Release cairn   # only what this script runs
CAIRN="$PWD/build/cli/cairn"

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" && wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

# The stack is copied so that its state (.cairn/state.db) stays out of the clone.
cp -r examples/quickstart "$work/stack"
cd "$work"

step "cairn serve (local control plane, project 'dev', fresh token)"
"$CAIRN" serve --listen 127.0.0.1:0 --data-dir "$work/data" --dev --provision-delay 300ms \
  >"$work/serve.out" 2>"$work/serve.log" &
server_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
grep '^listening on ' "$work/serve.out" || { echo "cairn serve did not start:"; cat "$work/serve.log"; exit 1; }
export CAIRN_ENDPOINT
CAIRN_ENDPOINT=$(sed -n 's/^listening on //p' "$work/serve.out")
export CAIRN_TOKEN
CAIRN_TOKEN=$(sed -n 's/^token: //p' "$work/serve.out")

step "cairn validate stack"
"$CAIRN" validate stack

step "cairn plan stack"
"$CAIRN" plan stack

step "cairn apply stack --auto-approve"
"$CAIRN" apply stack --auto-approve

step "cairn plan stack --detailed-exitcode   (nothing to do: exit 0)"
"$CAIRN" plan stack --detailed-exitcode

step "someone renames instance web[1] directly through the API"
id=$("$CAIRN" state show 'instance.web[1]' stack | sed -n 's/^  "id": "\(.*\)",$/\1/p')
curl -sS -o /dev/null -w 'PATCH /api/v1/compute/%{url_effective} -> HTTP %{http_code}\n' -X PATCH \
  -H "Authorization: Bearer $CAIRN_TOKEN" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: quickstart-rename-$id" \
  -d '{"name": "renamed-by-hand"}' "$CAIRN_ENDPOINT/api/v1/compute/$id" | sed "s|$CAIRN_ENDPOINT/api/v1/compute/||"

step "cairn drift stack   (drift found: exit 2)"
rc=0
"$CAIRN" drift stack || rc=$?
[ "$rc" -eq 2 ] || { echo "expected drift (exit 2), got $rc"; exit 1; }

step "cairn destroy stack --auto-approve"
"$CAIRN" destroy stack --auto-approve

step "stopping cairn serve"
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=""
echo "quickstart: done."
