#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Nothing a call wrote lands after its answer, not even an asynchronous write the kernel
# still had in flight.  A process of the call queues O_DIRECT writes of 1 MiB with
# io_submit until it is killed, each into space made ahead (unwritten until it lands),
# from the end of a chain of 110 sessions, past toolkit's sweep of what a command leaves.
# A killed process in the kernel's exit waits there for its writes in flight (exit_aio), so
# a runtime that answers once the call's processes are merely exiting answers before they
# land.  Right at the answer, no process of the call may be left (for bwrap.so, whose slot
# lists its tasks: bubblewrap's own process aside, which may still be tearing down the
# sandbox's namespaces); and the files' unwritten space (FIEMAP, which reads no data) must
# be the same then and two seconds later.  Where the sandbox has no Linux AIO (the seccomp
# table refuses io_setup), nothing can land late, and the case says so and skips.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
build_probe "$work/w/probe"
start_brokerd a "" "" "  - tools: [shell]
    paths: [$work/w]"

call a shell "{\"command\":\"mkfifo /tmp/p && (./probe aio $work/w/f 110 > /tmp/p &) && read l < /tmp/p && echo \$l\",\"cwd\":\"$work/w\"}"
left=$(left_in_slots)
at_answer=$("$work/w/probe" unwritten "$work/w/f" | sed "s/^unwritten=//")
sleep 2
later=$("$work/w/probe" unwritten "$work/w/f" | sed "s/^unwritten=//")
inflight=$(echo "$out" | sed -n 's/^inflight=//p')
case $inflight in
  "") fail "the writes were not queued: rc=$rc out=$out err=$err" ;;
  *[!0-9]*)
    # The seccomp table refuses io_setup (aio_host_slots.sh), and gVisor's kernel punches no
    # holes (fallocate): nothing is queued there.
    echo "SKIP $case_name: the sandbox cannot queue such writes here ($inflight): nothing can land late"
    exit 77
    ;;
  0)
    echo "SKIP $case_name: this file system wrote everything before io_submit returned: no write was in flight"
    exit 77
    ;;
  *)
    [ -z "$left" ] && pass "no process of the call left at its answer" \
      || fail "left at the answer: $left"
    [ "$at_answer" = "$later" ] \
      && pass "$inflight MiB in flight when the command ended; unwritten at the answer and 2 s later: $at_answer" \
      || fail "writes of the call landed after its answer: unwritten $at_answer at the answer, $later 2 s later ($inflight MiB in flight when the command ended)"
    ;;
esac
finish
