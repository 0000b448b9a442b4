#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A process of the host running as the sandboxes' uid may signal a process that is on its
# way into a sandbox: bwrap.so's keeper forks it, and once it has taken the sandbox's uid
# (or, for a sandbox made ahead of its call, entered the sandbox's user namespace to mount
# the call's folders) that uid may stop it.  The keeper waited for its report without a
# bound, and the call's thread waited for the keeper: a stopped child held its call past its
# time limit and past its client's hang-up, and its slot for good; a few of them, every
# slot, and brokerd ran nothing more, even after it exited.  A process of that uid stops
# every such child it can for a while, as calls come every 100 ms: each call must end (its
# time limit is 3 s), and a call after it must run.
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "it has no keeper forking sandboxes as their uid"

build_probe "$work/probe"
writable_folder "$work/w"
start_brokerd b "" "    slots: 2" "  - tools: [shell]
    paths: [$work/w]
    limits: {time: 3s}"
keepers=$(pgrep -P "$bpid" -x bwrap-keeper | tr '\n' ' ')
[ -n "$keepers" ] || fail "no keeper of brokerd $bpid"
setpriv --reuid="$sandbox_uid" --regid="$sandbox_uid" --clear-groups \
  "$work/probe" stopper 15 4 $keepers > "$work/stopper" 2>&1 &
stopper=$!
i=0
clients=
while kill -0 $stopper 2>/dev/null && [ $i -lt 100 ]; do
  i=$((i + 1))
  ( timeout 120 "$boxmaker" call shell "{\"command\":\"echo hi\",\"cwd\":\"$work/w\"}" \
      --socket "$work/b.sock" --session "$session" --call "s$i" > /dev/null 2>&1
    echo $? > "$work/rc.$i" ) &
  clients="$clients $!"
  sleep 0.1
done
wait $stopper
for c in $clients; do wait "$c"; done
hung=$(cat "$work"/rc.* | grep -c '^124$')
echo "$(cat "$work/stopper") while $i calls came"
[ "$hung" -eq 0 ] && pass "no call waited past its time limit on a stopped child ($i calls)" \
  || fail "$hung of $i calls did not end within 120 s (time limit 3 s)"
call b shell "{\"command\":\"echo after\",\"cwd\":\"$work/w\"}"
[ $rc -eq 0 ] && contains "$out" "after" && pass "a call after them runs: no slot was lost" \
  || fail "a call after the stopped children: rc=$rc out=$out err=$err"
# A mounter killed at its deadline sends its call to a sandbox of its own.
pool_fallbacks=1
# What was stopped and is still there would hold its slot's cgroup: kill it for the sweep.
for k in $keepers; do pkill -KILL -P "$k" -x bwrap-keeper 2>/dev/null; done
finish
