#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A once_per_session approval belongs to the caller it was given to: another local user
# (uid 65534) that sends the same session id is asked again (and nothing of its runs while
# nobody answers), and the approved caller's later calls run with an audit line naming the
# approval they ran on (its id, who approved it, when).
. "$(dirname "$0")/lib.sh"

writable_folder "$work/g"
start_brokerd b "admin_socket: $work/admin.sock
admin_group: 4242
audit: $work/audit.log" "" "  - tools: [shell]
    paths: [$work/g]
    approval: once_per_session
    approval_timeout: 3s"

# approve_next SESSION: waits for the call of SESSION to wait, approves it, prints its id.
approve_next () {
  id= i=0
  while [ -z "$id" ] && [ $i -lt 200 ]; do
    id=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" 2>/dev/null \
           | tr '{' '\n' | grep "\"session\":\"$1\"" | sed -n 's/.*"approval":"\([0-9a-f]*\)".*/\1/p')
    [ -n "$id" ] || { sleep 0.1; i=$((i + 1)); }
  done
  [ -n "$id" ] && "$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > /dev/null
  echo "$id"
}

"$boxmaker" call shell '{"command":"echo first"}' --socket "$work/b.sock" --session shared \
  --call c1 > "$work/c1.out" 2>&1 &
c1=$!
pids="$pids $c1"
first=$(approve_next shared)
wait "$c1"
[ -n "$first" ] && contains "$(cat "$work/c1.out")" "
first" && pass "the owner approved the first call" \
  || fail "the first call: id '$first', $(cat "$work/c1.out")"

# Another uid, the same session id: asked again; nobody answers, nothing runs.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$boxmaker" call shell \
        "{\"command\":\"echo intruder > $work/g/mark\"}" --socket "$work/b.sock" \
        --session shared --call c2 2>&1)
[ ! -e "$work/g/mark" ] && contains "$out" "did not answer within the approval timeout" \
  && pass "another uid with the same session id is asked again ($out)" \
  || fail "another uid rode the approval: $out; mark: $(ls "$work/g")"

# The approved caller's next call runs unasked, and its lines say on which approval.
"$boxmaker" call shell '{"command":"echo again"}' --socket "$work/b.sock" --session shared \
  --call c3 > "$work/c3.out" 2>&1
contains "$(cat "$work/c3.out")" "
again" && ! contains "$(cat "$work/c3.out")" "waiting for approval" && pass "the approved caller's next call runs unasked" \
  || fail "the approved caller's next call: $(cat "$work/c3.out")"
lines=$(grep '"call":"c3"' "$work/audit.log")
n=$(echo "$lines" | grep -c "\"approval\":{\"id\":\"$first\",\"state\":\"remembered\",\"approver_uid\":0,\"waited_ms\":0,\"approved_at\":\"20")
[ "$n" = 2 ] && pass "both of its audit lines name the approval it ran on" \
  || fail "its audit lines: $lines"
finish
