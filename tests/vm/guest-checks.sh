#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Inside the VM (lane.sh runs it there through run.sh): runs tests/vm/checks/NN-name.sh in
# the order of their numbers, each as its own bash, and sums them up.  BX_VM_CHECKS, an
# extended regular expression, keeps only the checks whose names match.  BX_VM_DEADLINE (Unix
# seconds; the guest's clock is the host's) is when the lane's time is up: a check starts only
# when the time it may take (its "# lane-seconds: N" line, 600 without one) is left, and one
# that is not started says so and why (and so do the ones after it, which build on it); it is
# not a failure.  Exit status 1 when any check
# file failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
failed=()
not_run=()
ran=0
for c in "$here"/checks/[0-9][0-9]-*.sh; do
  name=$(basename "$c" .sh)
  [ -n "${BX_VM_CHECKS:-}" ] && ! [[ $name =~ $BX_VM_CHECKS ]] && continue
  need=$(sed -n 's/^# lane-seconds: \([0-9]*\).*/\1/p' "$c" | head -n 1)
  # Later checks build on earlier ones (10 installs the packages): after the first that
  # does not start, none does.
  if [ ${#not_run[@]} -gt 0 ]; then
    not_run+=("$name")
    continue
  fi
  if [ -n "${BX_VM_DEADLINE:-}" ] && [ $(( $(date +%s) + ${need:-600} )) -gt "$BX_VM_DEADLINE" ]; then
    echo "==== $name: NOT RUN: it may take ${need:-600} s and $(( BX_VM_DEADLINE - $(date +%s) )) s are left of the lane's time"
    not_run+=("$name")
    continue
  fi
  echo "==== $name"
  t0=$(date +%s)
  bash "$c"
  rc=$?
  echo "==== $name: exit $rc, $(( $(date +%s) - t0 )) s"
  ran=$((ran + 1))
  [ $rc -eq 0 ] || failed+=("$name")
done
echo
[ ${#not_run[@]} -eq 0 ] || echo "vm checks: not run for the lane's time: ${not_run[*]}"
if [ ${#failed[@]} -eq 0 ]; then
  echo "vm checks: all $ran passed"
  exit 0
fi
echo "vm checks: ${#failed[@]} of $ran failed: ${failed[*]}"
exit 1
