#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A call whose processes cannot be made to end is not answered as though it were over, and
# its slot serves no other call while they are there.  A killed process stays in the kernel
# until the system call it is in returns, and a write to a disk that no longer keeps up, or
# to a file system that no longer answers, may not return for a long time.  The case slows
# the disk of its folder to 1 MiB/s for the sandboxes (lib.sh's slow_disk_brokerd), with
# one slot (two with the pool, which keeps a sandbox made ahead in the other).  A call whose
# grant has a time limit of 10 s starts one O_DIRECT write (in uninterruptible sleep all
# along) and ends.  The sandbox's first process waits for the writer, so the time limit
# passes and everything is killed; bwrap.so then waits up to 30 s for the writer to end.
# A write of 16 MiB (about 16 s) must have landed at the answer.  For one of 64 MiB (about
# 64 s) the call must fail with the fixed sentence while the writer is still there, the
# log must say why, and the next call must not run beside the writer.
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "the throttle slows only brokerd's own descendants, which bwrap.so's sandboxes are and podman's and gVisor's are not"

writable_folder "$work/w"
build_probe "$work/w/probe"
slots=1
[ -z "${BX_CONTAINMENT_POOL:-}" ] || slots=2
slow_disk_brokerd a 1048576 "  - tools: [shell]
    paths: [$work/w]
    limits: {time: 10s}" "    slots: $slots"

# "SLOT COMM" for each task of this case's brokerd's slots but their keepers.
slot_comms () {
  for procs in /sys/fs/cgroup/pids/boxmaker-bwrap/"$bpid"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      comm=$(cat "/proc/$t/comm" 2> /dev/null) || continue
      [ "$comm" = bwrap-keeper ] || echo "$(dirname "$procs") $comm"
    done
  done
}

# slow_write FILE MIB: a call whose command ends once a write of MIB MiB into FILE is under
# way: its marker made, the writer asleep in the kernel (D).
slow_write () {
  call a shell "{\"command\":\"./probe dwrite $1 $2 > /dev/null 2>&1 & p=\$!; until [ -e $1.writing ] && read -r a b s rest < /proc/\$p/stat && [ \$s = D ]; do sleep 0.1; done; echo writing\",\"cwd\":\"$work/w\"}"
}

# A write that lands within the 30 s (16 MiB, about 16 s): waited for, the call answered
# once it has landed, past its time limit.
slow_write small 16
size=$(stat -c %s "$work/w/small" 2> /dev/null)
writer=$(slot_comms | grep ' probe$')
[ $rc != 0 ] && contains "$err" "time limit" && [ -z "$writer" ] && [ "$size" = 16777216 ] \
  && pass "a write that lands within 30 s of the kill is waited for: all 16 MiB there at the answer ($err)" \
  || fail "a write that lands within 30 s: rc=$rc err=$err; $size bytes at the answer; the writer: '$writer'"

slow_write big 64
writer=$(slot_comms | grep ' probe$')
[ $rc != 0 ] && contains "$err" "the tool could not run" && [ -n "$writer" ] \
  && pass "a call whose write still ran 30 s after it was killed fails, the writer still there: $err" \
  || fail "a call whose write outlived its kill: rc=$rc out=$out err=$err; the writer at the answer: '$writer'"
grep -q "still run .* ms after they were killed" "$work/a.log" \
  && pass "brokerd's log says why: $(grep -o 'still run [0-9]* ms after they were killed' "$work/a.log")" \
  || fail "brokerd's log does not say why the call failed"

# The next call, while the writer may still be there: it must run in another slot or wait
# for the writer's to be empty.
rm -f "$work/w/running"
"$boxmaker" call shell "{\"command\":\"echo > running; sleep 2; echo next\",\"cwd\":\"$work/w\"}" \
  --socket "$work/a.sock" --session "$session" --call next > "$work/next.out" 2>&1 &
next=$!
pids="$pids $next"
wait_written "$work/w/running" $next
beside=$(slot_comms | awk '{ if ($2 == "probe") w[$1] = 1; else if ($2 == "sleep" || $2 == "sh") c[$1] = 1 } END { for (s in w) if (s in c) print s }')
wait $next
contains "$(cat "$work/next.out")" next && [ -z "$beside" ] \
  && pass "the next call ran, not beside the writer" \
  || fail "the next call: $(cat "$work/next.out"); in the writer's slot: '$beside'"

# The throttle lifted, the writer's write lands at once, and it must then be gone.
echo "$dev 0" > "$slow/blkio.throttle.write_bps_device"
t=0
while slot_comms | grep -q ' probe$' && [ $t -lt 600 ]; do
  sleep 0.1
  t=$((t + 1))
done
finish
