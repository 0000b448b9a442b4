#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A once_per_session approval belongs to the grant it was given for, by content, not by its
# place in the file: after a reload puts another grant in front, an approval given for
# folder A does not let a call in folder B run; the unchanged grant of A keeps its approval
# in its new place; a reload that changes that grant forgets it.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/a"
writable_folder "$work/b"
top="admin_socket: $work/admin.sock
admin_group: 4242
audit: $work/audit.log"
grant_a="  - tools: [shell]
    paths: [$work/a]
    approval: once_per_session
    approval_timeout: 3s"
grant_b="  - tools: [shell]
    paths: [$work/b]
    approval: once_per_session
    approval_timeout: 3s"
start_brokerd r "$top" "" "$grant_a"

approve_next () {
  id= i=0
  while [ -z "$id" ] && [ $i -lt 200 ]; do
    id=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" 2>/dev/null \
           | tr '{' '\n' | grep "\"call\":\"$1\"" | sed -n 's/.*"approval":"\([0-9a-f]*\)".*/\1/p')
    [ -n "$id" ] || { sleep 0.1; i=$((i + 1)); }
  done
  [ -n "$id" ] && "$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > /dev/null
  echo "$id"
}
# reload GRANTS: rewrites the config with GRANTS and waits for brokerd to serve them.
reloads=0
reload () {
  sed -i '/^grants:$/,$d' "$work/r.yaml"
  printf 'grants:\n%s\n' "$1" >> "$work/r.yaml"
  reloads=$((reloads + 1))
  kill -HUP "$bpid"
  i=0
  while [ "$(grep -c 'now serve' "$work/r.log")" -lt $reloads ] && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1))
  done
  [ "$(grep -c 'now serve' "$work/r.log")" -ge $reloads ] || fail "reload $reloads was not taken"
}
# call_in FOLDER COMMAND ID: a shell call in FOLDER of session s; sets $out.
call_in () {
  out=$("$boxmaker" call shell "{\"command\":\"$2\",\"cwd\":\"$1\"}" --socket "$work/r.sock" \
          --session s --call "$3" 2>&1)
}

"$boxmaker" call shell "{\"command\":\"echo in a\",\"cwd\":\"$work/a\"}" --socket "$work/r.sock" \
  --session s --call c1 > "$work/c1.out" 2>&1 &
c1=$!
pids="$pids $c1"
first=$(approve_next c1)
wait "$c1"
contains "$(cat "$work/c1.out")" "
in a" && pass "the owner approved a call in folder A" \
  || fail "the first call: $(cat "$work/c1.out")"

# B's grant goes in front of A's.
reload "$grant_b
$grant_a"
call_in "$work/b" "touch $work/b/mark" c2
[ ! -e "$work/b/mark" ] && contains "$out" "did not answer within the approval timeout" \
  && pass "after a reload put grant B first, A's approval does not cover B ($out)" \
  || fail "a call in B rode A's approval: $out"
call_in "$work/a" "echo still" c3
contains "$out" "
still" && ! contains "$out" "waiting for approval" && pass "the unchanged grant of A keeps its approval in its new place" \
  || fail "a call in A after the reload: $out"

# A's grant changes (it becomes untrusted): its approval is forgotten.
reload "$grant_b
$grant_a
    untrusted: true"
call_in "$work/a" "touch $work/a/mark" c4
[ ! -e "$work/a/mark" ] && contains "$out" "did not answer within the approval timeout" \
  && pass "a reload that changed grant A forgot its approval ($out)" \
  || fail "a changed grant kept its approval: $out"
finish
