#!/usr/bin/env bash
# Benchmark (issue 13): `cairn serve` on SQLite, on PostgreSQL, and as two
# replicas on one PostgreSQL database, in the same run: GET one, list and
# create throughput at 16 and 64 connections with p50/p99
# (bench/server_load, the connections spread over the replicas).
#
#   bench/serve_replicas.sh [BUILD_DIR] [SECONDS]    (defaults: build, 3)
#
# PostgreSQL is a throwaway cluster of Debian's postgresql package, with
# its durable defaults (fsync and synchronous_commit on), on loopback,
# started as the `postgres` user when run as root. Every server keeps the
# lifecycle worker idle (--provision-delay 1h) so the figures are the API's.
set -euo pipefail
build=${1:-build}
seconds=${2:-3}
cairn=$build/cli/cairn
load=$build/bench/server_load
token=cairn_bench_replicas_token_0123456789ab

bindir=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir="$d"; done
[ -n "$bindir" ] || { echo "no PostgreSQL server binaries (install postgresql)" >&2; exit 1; }
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)
work=$(mktemp -d /tmp/cairn-replicas.XXXXXX)
chmod 0755 "$work"
[ ${#as_owner[@]} -gt 0 ] && chown postgres: "$work"
cleanup() {
  for f in "$work"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  sleep 0.5
  "${as_owner[@]}" "$bindir/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"${as_owner[@]}" "$bindir/initdb" -D "$work/pg" -A trust -U cairn -E UTF8 >/dev/null
port=$((20000 + RANDOM % 40000))
"${as_owner[@]}" "$bindir/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c max_connections=200" start >/dev/null
"$bindir/createdb" -h "$work" -p "$port" -U cairn cairn_bench
export CAIRN_SERVE_PG_URL="postgresql://cairn@127.0.0.1:$port/cairn_bench"
echo "bench PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (fsync on)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"

sha=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
printf 'bench %s\n' "$sha" > "$work/tokens"

serve() {  # serve NAME STORE_ARGS... : starts a server, prints HOST:PORT
  local name=$1
  shift
  "$cairn" serve --listen 127.0.0.1:0 --data-dir "$work/$name" --tokens-file "$work/tokens" \
    --provision-delay 1h "$@" >"$work/$name.out" 2>"$work/$name.err" &
  echo $! >"$work/$name.pid"  # (a subshell: the pid goes by file)
  for _ in $(seq 1 100); do
    if grep -q '^listening on ' "$work/$name.out" 2>/dev/null; then
      sed -n 's/^listening on http:\/\///p' "$work/$name.out"
      return
    fi
    sleep 0.1
  done
  echo "server $name did not start: $(cat "$work/$name.err")" >&2
  exit 1
}

run() {  # run TITLE TARGETS
  echo
  echo "== $1"
  "$load" --target "$2" --token "$token" --duration "$seconds" --only get-one@16,get-one@64,list@16,create@16,create@64
}

sqlite=$(serve sqlite)
run "one replica, SQLite" "$sqlite"
kill "$(cat "$work/sqlite.pid")"
pg1=$(serve pg1 --store postgres)
run "one replica, PostgreSQL" "$pg1"
pg2=$(serve pg2 --store postgres)
run "two replicas, one PostgreSQL" "$pg1,$pg2"
