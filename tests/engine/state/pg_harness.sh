#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server:
#   pg_harness.sh COMMAND [ARGS...]
# Finds Debian's server binaries (/usr/lib/postgresql/<version>/bin), creates
# a cluster in a temporary directory (as the `postgres` user when run as root:
# the server refuses to run as root), starts it on a unix socket in that
# directory and a free loopback port, creates the database `cairn_test`,
# exports CAIRN_TEST_PG_URL, runs the command, then stops the server and
# removes everything. Exits with the command's status. Without the server
# binaries it fails (never skips): install the `postgresql` package
# (scripts/install-deps.sh lists it).
set -euo pipefail

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && bindir="$d"
done
if [ -z "$bindir" ]; then
  echo "pg_harness: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin;" \
    "install the postgresql package (scripts/install-deps.sh)" >&2
  exit 1
fi

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  if ! id postgres >/dev/null 2>&1; then
    echo "pg_harness: running as root but there is no 'postgres' user to run the server as" >&2
    exit 1
  fi
  as_owner=(runuser -u postgres --)
fi

dir="$(mktemp -d /tmp/cairn-pg.XXXXXX)"
chmod 0755 "$dir"
[ ${#as_owner[@]} -gt 0 ] && chown postgres: "$dir"
started=0
cleanup() {
  if [ "$started" = 1 ]; then
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U cairn --no-sync -E UTF8 \
  >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }

# A free port: a random one nothing answers on; if the server still cannot
# bind it (taken in between), try another.
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi  # in use
  if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=50" \
    start >/dev/null 2>&1; then
    started=1
    break
  fi
done
if [ "$started" != 1 ]; then
  echo "pg_harness: the server did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
fi

"$bindir/createdb" -h "$dir" -p "$port" -U cairn cairn_test

export CAIRN_TEST_PG_URL="postgresql://cairn@127.0.0.1:$port/cairn_test"
echo "pg_harness: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (socket dir $dir)"
set +e
"$@"
status=$?
set -e
exit $status
