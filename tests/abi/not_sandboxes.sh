#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The conformance kit reports refusing.so and fake.so as not sandboxes: every contract check
# skipped with the reason, exit status 3, and nothing counted as passed but the loading and
# its sentences.
#
#   not_sandboxes.sh CHECK RUNTIMEDIR
set -u
check=$1 dir=$2
fail () {
  echo "FAIL: $*"
  exit 1
}
for m in refusing fake; do
  out=$("$check" "$dir/$m.so")
  rc=$?
  echo "$out"
  [ "$rc" = 3 ] || fail "$m.so: exit $rc, expected 3 (not a sandbox)"
  # The summary says so, and never ends in a count that reads as a pass.
  echo "$out" | tail -n 1 | grep -q '^conformance: not a sandbox: 3 passed, 0 failed, [0-9]* skipped; no check of the contract ran$' \
    || fail "$m.so: summary"
  echo "$out" | tail -n 1 | grep -q 'passed, 0 failed$' && fail "$m.so: the summary ends as a pass"
  echo "$out" | grep -q '^skip: read_file runs toolkit over a read-only mount: not a sandbox: ' \
    || fail "$m.so: no reason given"
  n=$(echo "$out" | grep -c '^skip: .*: not a sandbox: ')
  [ "$n" -ge 18 ] || fail "$m.so: only $n checks skipped as not a sandbox"
  echo "$out" | grep -q '^pass: .*mount\|^pass: .*limit\|^pass: .*cancel' && fail "$m.so: a contract check passed"
done
"$check" >/dev/null 2>&1; [ $? = 2 ] || fail "no module: expected exit 2"
"$check" "$dir/fake.so" --option nokey >/dev/null 2>&1; [ $? = 2 ] || fail "--option without =: expected exit 2"
out=$("$check" "$dir/fake.so" --option typo=1)
[ $? = 2 ] || fail "a rejected option: expected exit 2"
echo "$out" | grep -q '^FAIL: loads as brokerd loads it: runtime module .*fake.so: options rejected: ' \
  || fail "a rejected option is not reported: $out"
echo "ok: refusing.so and fake.so are not sandboxes"
