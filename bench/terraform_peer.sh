#!/bin/sh
# The Terraform peer of bench/apply_provisioning (issue 33): `terraform apply`
# and `terraform destroy` of 1 + N terraform_data resources, each of the N
# depending on the first (the shape of 1 network + N instances), default
# -parallelism (10), local state. terraform_data takes no provisioning time,
# so this is Terraform's own cost of walking and recording the graph.
#
# Usage: bench/terraform_peer.sh [N] (default 10000). Needs `terraform` on PATH.
set -eu
n=${1:-10000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/main.tf" <<TF
resource "terraform_data" "net" {
  input = "10.30.0.0/16"
}
resource "terraform_data" "web" {
  count = $n
  input = "web-\${count.index} on \${terraform_data.net.id}"
}
TF
cd "$dir"
terraform init -input=false >/dev/null
for cmd in apply destroy; do
  /usr/bin/time -f "terraform $cmd of 1 + $n: %e s wall, %M KB peak RSS" \
    terraform "$cmd" -auto-approve -input=false >/dev/null
done
