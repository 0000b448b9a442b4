#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a call started runs no more once its answer comes, and what it left is gone before
# its slot serves again.  bwrap.so answers once every task of the call is gone, bubblewrap's
# own process aside, which may still be in the kernel's exit tearing down the sandbox's
# namespaces, its /tmp among them, and slirp4netns for a call with network, which may still
# be removing its network device there; the slot serves no other call until that is done.
#  1. A shell call leaves processes that fork on in the background.  Right when its answer
#     comes, with no wait, not one of them is left, in any state.
#  2. Three calls, one after the other in the same slots, each writes 40 MiB to its /tmp
#     under a memory limit of 64 MiB, which counts the pages of /tmp: each runs, what a call
#     before it wrote not counted against it.
#  3. As 1, in a shell with network (the egress proxy and slirp4netns beside the sandbox).
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "the slots and their tasks are bwrap.so's"

writable_folder "$work/w"
slots=1
[ -z "${BX_CONTAINMENT_POOL:-}" ] || slots=2 # the pool's 2 sandboxes need a slot each
start_brokerd e "" "    slots: $slots" "  - tools: [shell]
    paths: [$work/w]
    limits: {memory: 64m}"

# The forking loop starts last: once it has filled the call's pids limit, the shell itself
# could fork no more.
call e shell '{"command":"(while :; do :; done) > /dev/null 2>&1 & (while :; do sleep 1 & done) > /dev/null 2>&1 & echo started"}'
left=$(left_in_slots)
[ $rc = 0 ] && contains "$out" started && [ -z "$left" ] \
  && pass "a call that left forking processes: none of them is left when its answer comes" \
  || fail "rc=$rc out=$out err=$err; left at the answer: $left"

ok=0
for k in 1 2 3; do
  call e shell '{"command":"head -c 41943040 /dev/zero > /tmp/fill && echo filled"}'
  if [ $rc = 0 ] && contains "$out" "filled"; then ok=$((ok + 1)); else last="call $k: rc=$rc out=$out err=$err"; fi
done
[ $ok = 3 ] && pass "three calls in a row each filled 40 MiB of /tmp under a 64 MiB limit" \
  || fail "$ok of 3 ran; ${last:-}"

writable_folder "$work/n"
start_brokerd n "" "    slots: $slots" "  - tools: [shell]
    paths: [$work/n]
    hosts: [\"*.invalid\"]"
call n shell "{\"command\":\"(while :; do sleep 1 & done) > /dev/null 2>&1 & echo started\",\"cwd\":\"$work/n\"}"
left=$(left_in_slots)
[ $rc = 0 ] && contains "$out" started && [ -z "$left" ] \
  && pass "a call with network: nothing of it is left when its answer comes, the proxy included" \
  || fail "network: rc=$rc out=$out err=$err; left at the answer: $left"
finish
