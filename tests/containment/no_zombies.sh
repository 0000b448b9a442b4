#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Nothing outlives its call, not even a zombie.  A runtime whose sandbox processes end up
# orphaned under the host's init leaves them unreaped where init does not reap promptly
# (a container's or a VM's init), and each still counts against the processes limit of
# whatever cgroup it died in: calls start failing once enough have gone before.  Here 40
# calls one after another under a limit of 16 processes must all run.  (Zombies themselves
# are not counted here: another test running meanwhile may kill a brokerd, whose sandboxes
# then go to init, under the same uid.)
. "$(dirname "$0")/lib.sh"

mkdir -p "$work/r"
echo quiet > "$work/r/f"
start_brokerd z "" "" "  - tools: [read_file]
    paths: [$work/r]
    limits: {pids: 16}"
ok=0
k=0
while [ $k -lt 40 ]; do
  k=$((k + 1))
  call z read_file "{\"path\":\"$work/r/f\"}"
  if [ $rc = 0 ] && [ "$out" = quiet ]; then ok=$((ok + 1)); else last="rc=$rc out=$out err=$err"; fi
done
[ $ok = 40 ] && pass "40 calls in a row under a limit of 16 processes all ran" \
  || fail "$ok of 40 calls ran; the last failure: ${last:-}"
finish
