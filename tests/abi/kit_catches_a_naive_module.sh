#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The conformance kit catches a module that is no sandbox but runs toolkit on the host
# (naive.so): it counts as a runtime (read_file works), and every containment check it
# breaks fails, by name.
#
#   kit_catches_a_naive_module.sh CHECK NAIVE_SO TOOLKIT
set -u
check=$1 module=$2 toolkit=$3
out=$("$check" "$module" --option "toolkit=$toolkit" 2>&1)
rc=$?
echo "$out"
fail () {
  echo "FAIL: $*"
  exit 1
}
[ "$rc" = 1 ] || fail "exit $rc, expected 1 (a check failed)"
echo "$out" | tail -n 1 | grep -q '^conformance: [0-9]* passed, [1-9][0-9]* failed$' || fail "summary"
echo "$out" | grep -q '^pass: read_file runs toolkit over a read-only mount' \
  || fail "naive.so runs toolkit: it is a runtime, though no sandbox"
for name in "a read-only mount is read-only" \
            "nothing else of the host is visible" \
            "the sandbox's root is not the host's root" \
            "egress reaches only the granted hosts" \
            "the egress folder is read-only to the tool" \
            "the memory limit stops a call" \
            "the pids limit caps the processes" \
            "the file size limit caps a file"; do
  echo "$out" | grep -q "^FAIL: $name: " || fail "\"$name\" did not fail"
done
# The host's own interfaces: only when it has one besides loopback.
if grep -qv '^ *lo:\|Inter-\|face' /proc/net/dev; then
  echo "$out" | grep -q "^FAIL: no network without egress: " || fail "the network check did not fail"
fi
# What naive.so does keep: time limit, output cap, cancellation, threads.
for name in "the time limit ends a call with its fixed sentence" \
            "the output cap is exact" \
            "a cancelled call ends within 1 s with its fixed sentence" \
            "calls from many threads at once"; do
  echo "$out" | grep -q "^pass: $name" || fail "\"$name\" did not pass"
done
echo "ok: the kit fails a module that runs toolkit on the host"
