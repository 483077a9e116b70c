#!/usr/bin/env bash
# The Terraform peer of `cairn validate` and `cairn plan` (issue 33): the
# same graph shape as bench/plan_creates (one "network" and N - 1
# "instances" each referring to it), as Terraform's builtin
# `terraform_data` resources, in files of 1,000 blocks. Times `terraform
# validate` and `terraform plan -out` (every resource a create, no state),
# with GNU time's wall time, CPU time and peak RSS, and the matching
# `cairn validate` of bench/plan_creates' stack shape for the same N.
#
# Usage: bench/terraform_plan_peer.sh [N (default 10000)] [CAIRN (default build/cli/cairn)]
# Needs `terraform` on PATH (nothing is downloaded: terraform_data is built in).
set -euo pipefail
n=${1:-10000}
cairn=${2:-build/cli/cairn}
command -v terraform >/dev/null || { echo "terraform_plan_peer: no terraform on PATH" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TF_CLI_CONFIG_FILE=/dev/null TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

mkdir -p "$work/tf" "$work/cairn"
{
  echo 'resource "terraform_data" "n0" {'
  echo '  input = { name = "n0", region = "eu-central", cidr = "10.0.0.0/16" }'
  echo '}'
} > "$work/tf/main.tf"
echo 'kind: network
name: n0
spec: {region: eu-central, cidr: 10.0.0.0/16}' > "$work/cairn/main.yaml"
for ((i = 1; i < n; i++)); do
  f=$((i / 1000))
  printf 'resource "terraform_data" "i%d" {\n  input = { name = "i%d", region = "eu-central", plan = "s-1vcpu-1gb", image = "debian-12", network = terraform_data.n0.id }\n}\n' \
    "$i" "$i" >> "$work/tf/r$f.tf"
  printf -- '---\nkind: instance\nname: i%d\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12, network: "${network.n0.id}"}\n' \
    "$i" >> "$work/cairn/r$f.yaml"
done

measure() {  # LABEL COMMAND...: one line of wall, CPU and peak RSS
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %U+%S s CPU, %M KB peak RSS" "$@" > /dev/null 2> "$work/time" || {
    cat "$work/time" >&2; return 1; }
  tail -1 "$work/time"
}

(cd "$work/tf" && terraform init -input=false > /dev/null)
echo "$n resources; load average $(cut -d' ' -f1-3 /proc/loadavg)"
measure "terraform validate" terraform -chdir="$work/tf" validate
measure "cairn validate" "$cairn" validate "$work/cairn"
measure "terraform plan -out (all creates)" terraform -chdir="$work/tf" plan -input=false -refresh=false -out="$work/tf.plan"
