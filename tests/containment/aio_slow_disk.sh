#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# As aio_after_answer, on a slow disk: the writes a call queued take seconds to land, and
# its answer still waits for every one of them.  The case slows the disk of its folder for
# the sandboxes brokerd starts (a cgroup v1 blkio write throttle of 8 MiB/s).  A process of
# the call, past toolkit's sweep and holding none of the sandbox's pipes, queues up to 128
# MiB of O_DIRECT writes (io_submit) and waits; killed, it waits in the kernel's exit for
# them, up to 16 s, well past the moment the call's processes are merely exiting.  Twice: once
# the call's command ends by itself, once it is killed for passing its output cap.  Right
# at each answer no process of the call is left, and the space the call wrote into that is
# still unwritten is the same then and two seconds later.  Where the sandbox has no Linux
# AIO (the seccomp table refuses io_setup), nothing can land late, and the case says so and
# skips.
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "the throttle slows only brokerd's own descendants, which bwrap.so's sandboxes are and podman's and gVisor's are not"

writable_folder "$work/w"
build_probe "$work/w/probe"
slow_disk_brokerd a 8388608 "  - tools: [shell]
    paths: [$work/w]"

# slow_writes FILE HOW THEN: a shell call whose probe queues its writes into FILE.*, its
# descriptors none of the sandbox's, and says how many MiB are in flight in FILE.inflight;
# THEN runs after that.  HOW names the way the call ends.
slow_writes () {
  before=$(throttled)
  began=$(date +%s)
  call a shell "{\"command\":\"mkfifo /tmp/p && (./probe aio $1 110 128 < /dev/null > /tmp/p 2> /dev/null &) && read l < /tmp/p && echo \$l > $1.inflight && $3\",\"cwd\":\"$work/w\"}"
  left=$(left_in_slots)
  at_answer=$("$work/w/probe" unwritten "$1" | sed "s/^unwritten=//")
  took=$(($(date +%s) - began))
  sleep 2
  later=$("$work/w/probe" unwritten "$1" | sed "s/^unwritten=//")
  inflight=$(sed -n 's/^inflight=//p' "$1.inflight" 2> /dev/null)
  slowed=$(( ($(throttled) - before) / 1048576 ))
  case $inflight in
    "") fail "$2: the writes were not queued: rc=$rc out=$out err=$err"; return ;;
    *[!0-9]* | 0)
      # The seccomp table refuses io_setup (aio_host_slots.sh); or the file system wrote
      # everything before io_submit returned.
      echo "SKIP $case_name: the sandbox cannot queue such writes (in flight: $inflight): nothing can land late"
      exit 77
      ;;
  esac
  [ $slowed -ge 16 ] \
    || fail "$2: only $slowed MiB of the call's writes went through the throttle: the case slowed nothing"
  [ -z "$left" ] && pass "$2: no process of the call left at its answer ($took s after the call)" \
    || fail "$2: left at the answer ($took s after the call): $left"
  [ "$at_answer" = "$later" ] \
    && pass "$2: every write the call queued had landed at its answer ($slowed MiB through the throttle; unwritten $at_answer MiB then and 2 s later)" \
    || fail "$2: writes of the call landed after its answer: unwritten $at_answer MiB at the answer ($took s after the call), $later 2 s later"
}
slow_writes "$work/w/f" "the command ended" "echo ended"
contains "$out" ended || fail "the command ended: rc=$rc out=$out err=$err"
slow_writes "$work/w/g" "past the output cap" "head -c 1000000 /dev/zero"
contains "$err" "truncated=true" || fail "past the output cap: not truncated: rc=$rc err=$err"
finish
