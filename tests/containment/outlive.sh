#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 5: nothing outlives its call, whatever dies.  brokerd killed with SIGKILL during a
# call; brokerd and everything it started killed; a brokerd stopped with SIGTERM past
# grace_ms; a restarted brokerd sweeping what a dead one left, but not a live one's (podman:
# by container name; for bwrap.so that part is in bwrap_real_brokerd).
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
grant="  - tools: [shell]
    paths: [$work/w]"
opts="    shell_ms: 2000"

# elapsed since $t0, in seconds
t0=0
elapsed () { echo $(( $(date +%s) - t0 )); }
# long_call NAME MARKER [SECONDS]: a call that would write MARKER after SECONDS (45: longer
# than any wait below, so a sandbox that outlives its call fails the wait), in
# the background
long_call () {
  "$boxmaker" call shell "{\"command\":\"sleep ${3:-45}; touch $2\",\"cwd\":\"$work/w\"}" \
    --socket "$work/$1.sock" --session "$session" --call "$2" > /dev/null 2>&1 &
  t=$(( $(date +%s) + 120 ))
  until started "$2"; do
    [ "$(date +%s)" -lt $t ] || { fail "the $2 container did not start"; return 1; }
    sleep 0.1
  done
}
# started MARKER: the call's sandbox runs (podman: its container; bwrap.so: a sandbox in
# the slots of this case's brokerds, one call at a time).
started () {
  if [ "$module" = podman ]; then
    podman ps --format '{{.Names}}' | grep -q -- "-$session-$1-"
  else
    [ -n "$(containers_left)" ]
  fi
}

# 1. SIGKILL to brokerd alone.
start_brokerd a "" "$opts" "$grant"
long_call a m1 && t0=$(date +%s) && kill -9 "$bpid"
wait_gone 30 && pass "brokerd killed: its call's container gone after $(elapsed) s" \
  || fail "brokerd killed: its container still runs after $(elapsed) s"

# 2. SIGKILL to brokerd and every process it started: the container's own deadline.
start_brokerd b "" "$opts" "$grant"
long_call b m2 && t0=$(date +%s)
kids=$(pgrep -P "$bpid")
kill -9 $kids; kill -9 "$bpid"
wait_gone 30 && pass "brokerd and its children killed: container gone after $(elapsed) s" \
  || fail "brokerd and its children killed: container still runs after $(elapsed) s"

# 3. SIGTERM past grace_ms.
start_brokerd c "grace_ms: 300" "$opts" "$grant"
long_call c m3 && t0=$(date +%s) && kill -TERM "$bpid"
i=0; while kill -0 "$bpid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$bpid" 2>/dev/null && fail "brokerd did not exit after SIGTERM"
wait_gone 30 && pass "SIGTERM past grace_ms: container gone after $(elapsed) s" \
  || fail "SIGTERM past grace_ms: container still runs after $(elapsed) s"

if [ "$module" != podman ]; then
  echo "skipped for $module.so: 4. (the sweep by container name); bwrap_real_brokerd checks that a"
  echo "restarted brokerd sweeps a dead one's cgroups and leaves a live one's"
  sleep 1
  for m in m1 m2 m3; do
    [ -e "$work/w/$m" ] && fail "a sandbox outlived its call and wrote $m"
  done
  finish
fi

# 4. A restart sweeps what a dead brokerd left (its containers and egress folders), and a
# brokerd sharing the home keeps its own.  The dead one runs calls with a long limit, and
# everything it started is killed, so only the sweep can end them.
long="    shell_ms: 60000"
start_brokerd live "" "$long" "$grant"
livepid=$bpid
long_call live m4 40
start_brokerd dead "" "$long" "$grant"
long_call dead m5 40
# Children first: the watcher must not see brokerd end and start cleaning up.  brokerd is
# stopped first, so that it forks none after they are listed.
kill -STOP "$bpid"
kids=$(pgrep -P "$bpid")
kill -9 $kids; kill -9 "$bpid"
dead=$(podman ps --format '{{.Names}}' | grep -- "-$session-m5-")
token=${dead##*-}
mkdir -p "$work/home/run/egress/boxmaker-$session-x-0-$token"
sleep 0.5
[ -n "$(podman ps --format '{{.Names}}' | grep -- "-$session-m5-")" ] \
  || fail "the dead brokerd's container ended by itself; the sweep is not tested"
start_brokerd again "" "$long" "$grant"
t=$(( $(date +%s) + 60 ))
while podman ps -a --format '{{.Names}}' | grep -q -- "-$session-m5-" && [ "$(date +%s)" -lt $t ]; do
  sleep 0.1
done
podman ps -a --format '{{.Names}}' | grep -q -- "-$session-m5-" \
  && fail "a restarted brokerd left the dead one's container" \
  || pass "a restarted brokerd removed the dead one's container"
[ -e "$work/home/run/egress/boxmaker-$session-x-0-$token" ] \
  && fail "a restarted brokerd left the dead one's egress folder" \
  || pass "a restarted brokerd removed the dead one's egress folder"
podman ps --format '{{.Names}}' | grep -q -- "-$session-m4-" \
  && pass "a live brokerd's container was left alone" \
  || fail "the sweep removed a live brokerd's container"
kill -9 "$livepid"
wait_gone 30 || fail "the live brokerd's container outlived it"

sleep 1
for m in m1 m2 m3 m4 m5; do
  [ -e "$work/w/$m" ] && fail "a container outlived its call and wrote $m"
done
finish
