#!/bin/sh
# Apply and destroy of 1 network + N instances against a fresh
# `cairn serve --provision-delay 1s --rate-limit 0` (issue 33), with the CPU
# each side spent: the client's user + system time (GNU time) and the
# server's (its /proc/PID/stat delta over the command). The binaries take
# turns, RUNS rounds, so that they are measured under the same load;
# bench/apply_provisioning gives the requests per resource.
#
# Usage: bench/apply_cpu.sh "CAIRN [CAIRN...]" [N] [RUNS] [FLAGS]
#   e.g. bench/apply_cpu.sh "old/cairn build/cli/cairn" 10000 3 "--parallelism 10"
# Prints one line per command: binary, command, wall s, client CPU s,
# server CPU s, client peak RSS MB.
set -eu
bins=$1
n=${2:-10000}
runs=${3:-3}
flags=${4:-}
port=18190
token=cairn_bench_token_0123456789abcdef
hz=$(getconf CLK_TCK)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
server_cpu() { awk -v hz="$hz" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
round=0
while [ "$round" -lt "$runs" ]; do
  round=$((round + 1))
  for bin in $bins; do
    dir="$work/run"
    rm -rf "$dir"
    mkdir -p "$dir/stack"
    cat >"$dir/stack/main.yaml" <<YAML
kind: network
name: net
spec: {region: eu-central, cidr: 10.30.0.0/16}
---
kind: instance
name: web
count: $n
spec:
  name: web-\${count.index}
  region: eu-central
  plan: s-1vcpu-1gb
  image: debian-12
  network: \${network.net.id}
YAML
    "$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir/data" --dev-token "$token" \
      --provision-delay 1s --rate-limit 0 >"$dir/serve.log" 2>&1 &
    server=$!
    tries=0
    until curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null || [ "$tries" -ge 100 ]; do
      sleep 0.1
      tries=$((tries + 1))
    done
    for command in apply destroy; do
      before=$(server_cpu "$server")
      # shellcheck disable=SC2086 # FLAGS is split on purpose
      (cd "$dir/stack" && CAIRN_ENDPOINT="http://127.0.0.1:$port" CAIRN_TOKEN="$token" NO_COLOR=1 \
        /usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$bin" "$command" . --auto-approve $flags \
        >/dev/null 2>&1)
      after=$(server_cpu "$server")
      read -r wall user sys rss <"$dir/time"
      awk -v b="$bin" -v c="$command" -v w="$wall" -v u="$user" -v s="$sys" -v a="$after" \
        -v z="$before" -v r="$rss" 'BEGIN {
          printf "%s %s wall %s client_cpu %.2f server_cpu %.2f rss_mb %d\n", b, c, w, u + s, a - z, r / 1024
        }'
    done
    kill "$server"
    wait "$server" 2>/dev/null || true
  done
done
