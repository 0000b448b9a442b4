#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One uid cannot take every place for calls waiting for approval: a local user (uid 65534)
# that sends 300 gated calls gets its share (32) and no more, and another caller's gated call
# still reaches the owner.  Needs no sandbox (nothing runs: every call waits), so it runs
# once, with the refusing runtime, beside the podman.so cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" = bwrap ]; then
  echo "SKIP approval_flood: does not apply to bwrap.so: no sandbox runs (every call waits);"
  echo "it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=refusing
. "$(dirname "$0")/lib.sh"

cc -O1 -o "$work/waiters" "$here/waiters.c" || { fail "cannot build the waiters"; finish; }
chmod 0755 "$work/waiters"
mkdir -p "$work/g"; chmod 0755 "$work/g"; echo hi > "$work/g/f"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
socket_mode: 0666
admin_socket: $work/admin.sock
admin_group: 4242
home: $work/home
audit: $work/audit.txt
grants:
  - tools: [read_file]
    paths: [$work/g]
    approval: always
    approval_timeout: 10m
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/admin.sock" $!

# The flooding local user: 300 calls, all held open.
setpriv --reuid=65534 --regid=65534 --clear-groups \
  "$work/waiters" "$work/b.sock" 300 "$work/g/f" flood > "$work/held" 2> "$work/waiters.log" &
pids="$pids $!"
i=0; until grep -q pending "$work/held" 2>/dev/null || [ $i -gt 600 ]; do sleep 0.1; i=$((i + 1)); done
held=$(cat "$work/held")
[ "$held" = "pending 32 denied 268" ] && pass "one uid gets 32 places and no more ($held)" \
  || fail "the flooding uid: $held ($(cat "$work/waiters.log"))"
grep -q "too many of your calls are waiting for the owner's approval" "$work/waiters.log" \
  && pass "its refusals say why" || fail "its refusals: $(cat "$work/waiters.log")"

# Another caller (root) still reaches the owner: its call waits, and the owner declines it.
"$boxmaker" call read_file "{\"path\":\"$work/g/f\"}" --socket "$work/b.sock" \
  --session other > "$work/other.out" 2>&1 &
other=$!
pids="$pids $other"
id=
i=0
while [ -z "$id" ] && [ $i -lt 600 ]; do
  id=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" 2>/dev/null \
         | tr '{' '\n' | grep '"session":"other"' | sed -n 's/.*"approval":"\([0-9a-f]*\)".*/\1/p')
  [ -n "$id" ] || { sleep 0.1; i=$((i + 1)); }
done
if [ -n "$id" ]; then
  "$boxmaker" decline "$id" --reason "checked" --admin-socket "$work/admin.sock" > /dev/null
  wait "$other"
  contains "$(cat "$work/other.out")" "the owner declined: checked" \
    && pass "another uid's call reached the owner while one uid flooded" \
    || fail "another uid's call: $(cat "$work/other.out")"
else
  wait "$other"
  fail "another uid's call never waited for the owner: $(cat "$work/other.out")"
fi
finish
