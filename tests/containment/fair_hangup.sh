#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A call that waits for its turn and whose client hangs up leaves no run taken: uids A and B
# hold both runs (max_running 2, one each), uid C queues four calls and hangs up on all of
# them, then A's client leaves.  uid D's `echo` must then be answered while B's call still
# runs: a run kept by any of C's calls, or by A's, would make D wait for B's.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != bwrap ]; then
  echo "SKIP fair_hangup: does not apply to podman.so: the rule is brokerd's, and fair_slots"
  echo "says why it runs against bwrap.so"
  exit 77
fi
. "$(dirname "$0")/lib.sh"

mkdir -p "$work/g"
chmod 0755 "$work/g"
start_brokerd b "audit: $work/audit.log
max_running: 2
max_running_per_uid: 1" "    shell_ms: 120s" "  - tools: [shell]
    paths: [$work/g]
    writable: false"

# as UID JSON CALL: one client of UID (exec'd: killing the job's pid hangs the client up).
as () {
  exec setpriv --reuid="$1" --regid="$1" --clear-groups "$boxmaker" call shell "$2" \
    --socket "$work/b.sock" --session "$session" --call "$3"
}
# lines N PATTERN: until the audit log holds N lines matching PATTERN (at most 60 s).
lines () {
  t=0
  while [ "$(grep -c "$2" "$work/audit.log" 2>/dev/null)" -lt "$1" ] && [ $t -lt 600 ]; do
    sleep 0.1
    t=$((t + 1))
  done
  [ "$(grep -c "$2" "$work/audit.log" 2>/dev/null)" -ge "$1" ] || fail "no $1 lines of $2"
}

as 65533 '{"command":"sleep 100"}' a > "$work/a.out" 2>&1 &
a_pid=$!
as 65532 '{"command":"sleep 100"}' b > "$work/b.out" 2>&1 &
b_pid=$!
pids="$pids $a_pid $b_pid"
lines 2 '"outcome":"running"'
t=0
while [ "$(containers_left | grep -c '^sleep')" -lt 2 ] && [ $t -lt 600 ]; do
  sleep 0.1
  t=$((t + 1))
done

c_pids=
for i in 1 2 3 4; do
  as 65531 '{"command":"echo c"}' "c$i" > "$work/c$i.out" 2>&1 &
  c_pids="$c_pids $!"
done
pids="$pids $c_pids"
lines 6 '"outcome":"running"'
for p in $c_pids; do kill -9 "$p"; done
lines 4 '"call":"c.*"outcome":"cancelled"'
grep -q '"call":"c.*"outcome":"result"' "$work/audit.log" \
  && fail "a call of uid C ran while A and B held both runs"
kill -9 "$a_pid"
lines 1 '"call":"a".*"outcome":"cancelled"'

out=$(setpriv --reuid=65530 --regid=65530 --clear-groups "$boxmaker" call shell \
        '{"command":"echo fair"}' --socket "$work/b.sock" --session "$session" --call d 2>&1)
d_rc=$?
if [ $d_rc -eq 0 ] && contains "$out" fair && kill -0 "$b_pid" 2>/dev/null; then
  pass "uid D's echo was answered while uid B's call still ran"
else
  fail "uid D's echo (exit $d_rc: $out) was not answered while uid B's call ran"
fi
kill "$b_pid" 2>/dev/null
wait_gone 60 || fail "sandboxes left after the clients left: $(containers_left)"
finish
