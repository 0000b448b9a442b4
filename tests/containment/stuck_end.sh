#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A call whose processes cannot be made to end is not answered as though it were over.  A
# killed process stays in the kernel until the system call it is in returns, and a write
# to a disk that no longer keeps up, or to a file system that no longer answers, may not
# return for a long time: what it writes lands after the call is over.  The case slows the
# disk of its folder to 1 MiB/s for the sandboxes (lib.sh's slow_disk_brokerd); a call
# whose grant has a time limit of 3 s starts one O_DIRECT write of 48 MiB (about 48 s at
# that speed, in uninterruptible sleep all along) and ends.  The sandbox's first process
# waits for the writer, so the time limit passes and everything is killed; bwrap.so then
# waits 30 s for the writer to end: the call must fail with the fixed sentence, the log
# must say why, and a call after it must run as usual.
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "the throttle slows only brokerd's own descendants, which bwrap.so's sandboxes are and podman's and gVisor's are not"

writable_folder "$work/w"
build_probe "$work/w/probe"
slow_disk_brokerd a 1048576 "  - tools: [shell]
    paths: [$work/w]
    limits: {time: 3s}"

# The command ends once the write is under way: the writer asleep in the kernel (D).
call a shell "{\"command\":\"./probe dwrite big 48 > /dev/null 2>&1 & p=\$!; until read -r a b s rest < /proc/\$p/stat && [ \$s = D ]; do sleep 0.1; done; echo writing\",\"cwd\":\"$work/w\"}"
[ $rc != 0 ] && contains "$err" "the tool could not run" \
  && pass "a call whose write still ran 30 s after it was killed fails: $err" \
  || fail "a call whose write outlived its kill: rc=$rc out=$out err=$err"
grep -q "still run .* ms after they were killed" "$work/a.log" \
  && pass "brokerd's log says why: $(grep -o 'still run .* ms after they were killed' "$work/a.log")" \
  || fail "brokerd's log does not say why the call failed"

call a shell '{"command":"echo next"}'
[ $rc = 0 ] && contains "$out" next && pass "the next call runs" \
  || fail "the call after it: rc=$rc out=$out err=$err"
finish
