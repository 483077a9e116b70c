#!/bin/sh
# A CI pipeline for a Cairn stack, as shell commands any CI system runs
# (docs/ci.md). Two jobs: `plan` on every pull request, `apply` once it is
# merged, which applies exactly the plan that was reviewed.
#
#   examples/ci/pipeline.sh plan  STACK POLICIES OUT   # writes OUT/{ci.plan,plan.md,...}
#   examples/ci/pipeline.sh apply STACK POLICIES OUT   # applies OUT/ci.plan
#
# CAIRN_ENDPOINT and CAIRN_TOKEN come from the CI system's secrets. Exit
# codes: 0 success; 1 an error, a failed policy test or a mandatory policy
# violation (nothing saved or applied); plan's 2 (changes) is success here.
set -eu
job=$1 stack=$2 policies=$3 out=$4
cairn=${CAIRN:-cairn}
mkdir -p "$out"

case "$job" in
plan)
  # 1. The manifests: valid and formatted (no API call).
  "$cairn" validate "$stack"
  "$cairn" fmt --check "$stack"
  # 2. The policies' own tests, as a JUnit report the CI shows.
  "$cairn" policy test "$policies" --junit-xml "$out/policy-tests.xml"
  # 3. The stack's own tests, if it has any, against a throwaway control
  #    plane `cairn test` starts itself (no credentials needed).
  has_tests=0
  for t in "$stack"/*.test.yaml "$stack"/tests/*.test.yaml; do
    if [ -e "$t" ]; then has_tests=1; fi
  done
  if [ "$has_tests" = 1 ]; then
    "$cairn" test "$stack" --junit-xml "$out/stack-tests.xml"
  fi
  # 4. The plan, saved for the apply job, checked against the policies,
  #    with a Markdown summary for the pull request comment, a SARIF log for
  #    code scanning and a JUnit report. Exit 2 means "changes": success.
  status=0
  "$cairn" plan "$stack" --out "$out/ci.plan" --detailed-exitcode \
    --policy "$policies" --sarif "$out/policy.sarif" --junit-xml "$out/policy.xml" \
    --markdown >"$out/plan.md" || status=$?
  if [ "$status" -eq 1 ]; then exit 1; fi
  echo "plan: $([ "$status" -eq 2 ] && echo changes || echo no changes), saved to $out/ci.plan"
  ;;
apply)
  # 5. After the merge: the reviewed plan, shown in the job's log, checked
  #    again against the policies, applied as saved (refused if the state
  #    moved since).
  "$cairn" show "$out/ci.plan"
  "$cairn" apply "$out/ci.plan" "$stack" --policy "$policies"
  ;;
*)
  echo "usage: $0 plan|apply STACK POLICIES OUT" >&2
  exit 2
  ;;
esac
