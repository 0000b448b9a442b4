#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One caller cannot hold every run: uid A starts 32 slow shell calls (the most connections
# one uid may hold), and uid B's `echo` is answered while every one of A's calls still
# runs.  No clock decides: B's answer must come while A's clients are all still waiting.
# Real bwrap.so with its default 16 slots, the scarce resource brokerd shares out.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != bwrap ]; then
  echo "SKIP fair_slots: does not apply to podman.so: the rule is brokerd's, and bwrap.so's"
  echo "slots are what one caller could hold; 32 podman containers at once are not run here"
  exit 77
fi
. "$(dirname "$0")/lib.sh"

mkdir -p "$work/g"
chmod 0755 "$work/g"
start_brokerd b "audit: $work/audit.log" "    shell_ms: 120s" "  - tools: [shell]
    paths: [$work/g]
    writable: false"

# uid A: 32 sleepers, each its own client.
a_pids=
i=0
while [ $i -lt 32 ]; do
  setpriv --reuid=65533 --regid=65533 --clear-groups \
    "$boxmaker" call shell '{"command":"sleep 100"}' --socket "$work/b.sock" \
    --session "$session" --call "a$i" > "$work/a$i.out" 2>&1 &
  a_pids="$a_pids $!"
  i=$((i + 1))
done
pids="$pids $a_pids"

# Until every one of A's calls is taken (its "running" line) and their sandboxes sleep.
t=0
while [ "$(grep -c '"outcome":"running"' "$work/audit.log" 2>/dev/null)" -lt 32 ] && [ $t -lt 600 ]; do
  sleep 0.1
  t=$((t + 1))
done
running=$(grep -c '"outcome":"running"' "$work/audit.log" 2>/dev/null)
[ "$running" -eq 32 ] || fail "only $running of uid A's 32 calls were taken"
t=0
while [ "$(containers_left | grep -c '^sleep')" -lt 8 ] && [ $t -lt 600 ]; do
  sleep 0.1
  t=$((t + 1))
done
sleeping=$(containers_left | grep -c '^sleep')
echo "uid A: 32 calls taken, $sleeping sandboxes sleeping"

# uid B's echo, while A's calls run.
out=$(setpriv --reuid=65532 --regid=65532 --clear-groups \
        "$boxmaker" call shell '{"command":"echo fair"}' --socket "$work/b.sock" \
        --session "$session" --call b1 2>&1)
b_rc=$?
done_a=0
for p in $a_pids; do kill -0 "$p" 2>/dev/null || done_a=$((done_a + 1)); done
if [ $b_rc -eq 0 ] && contains "$out" fair && [ $done_a -eq 0 ]; then
  pass "uid B's echo was answered while all 32 of uid A's calls still ran"
else
  fail "uid B's echo (exit $b_rc: $out) came after $done_a of uid A's calls had ended"
fi
if grep -q '"command":"sleep.*"outcome":"result"' "$work/audit.log"; then
  fail "a call of uid A ended before uid B's: $(grep -c '"outcome":"result"' "$work/audit.log")"
fi

# A's clients leave: their calls are cancelled, and nothing of them stays.
for p in $a_pids; do kill "$p" 2>/dev/null; done
wait_gone 60 || fail "sandboxes left after uid A's clients left: $(containers_left)"
finish
