#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A once_per_session approval of one MCP server tool covers that tool only: after the owner
# approves asked.echo in session s1, asked.echo runs there unasked, but asked.pid (another
# tool of the same server), other.echo (the same tool name on another server), asked.echo in
# session s2, and asked.echo in s1 from another local uid (65534) are each asked again, and
# nothing of them runs while they wait.  Needs no sandbox (fake.so answers with the spec it
# was handed), so it runs once, beside the podman.so cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP mcp_approval_scope: does not apply to ${BX_CONTAINMENT_MODULE}.so: no sandbox runs"
  echo "(fake.so answers); it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=fake
. "$(dirname "$0")/lib.sh"
if [ ! -e "$runtimedir/fake.so" ]; then
  echo "SKIP $case_name: fake.so is not built (a build without BX_TEST_HOOKS)"
  exit 77
fi

mkdir -p "$work/asked" "$work/other"
# A long approval timeout: whether a call is asked is read from the approvals list, not
# from a timeout passing, and the owner declines what was asked again.
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
socket_mode: 0666
home: $work/home
audit: $work/audit.log
admin_socket: $work/admin.sock
admin_group: 4242
runtime:
  module: fake
  options:
    mode: echo
grants:
  - mcp_server:
      name: asked
      command: [python3, /srv/mcp/server.py]
    paths: [$work/asked]
    approval: once_per_session
    approval_timeout: 10m
  - mcp_server:
      name: other
      command: [python3, /srv/mcp/server.py]
    paths: [$work/other]
    approval: once_per_session
    approval_timeout: 10m
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }

# start TAG TOOL SESSION [UID]: the call in the background, its answer in $work/TAG.out.
start () {
  as=
  [ -z "${4:-}" ] || as="setpriv --reuid=$4 --regid=$4 --clear-groups"
  rm -f "$work/$1.done"
  { $as "$boxmaker" call "$2" '{"text": "x"}' --socket "$work/b.sock" --session "$3" \
      --call "$1" > "$work/$1.out" 2>&1; : > "$work/$1.done"; } &
  started=$!
  pids="$pids $started"
}
# waiting CALL: the approval id of CALL once it waits for the owner, or nothing when its
# client ended first (it was not asked).
waiting () {
  id=
  while [ -z "$id" ] && [ ! -e "$work/$1.done" ]; do
    id=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" 2>/dev/null \
           | tr '{' '\n' | grep "\"call\":\"$1\"" | sed -n 's/.*"approval":"\([0-9a-f]*\)".*/\1/p')
    [ -n "$id" ] || sleep 0.1
  done
  echo "$id"
}
ran () { contains "$(cat "$work/$1.out")" '"tool":"mcp_call"'; }

start a1 asked.echo s1
id=$(waiting a1)
[ -n "$id" ] && "$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > /dev/null
wait "$started"
[ -n "$id" ] && ran a1 && pass "the owner approved asked.echo in s1, once_per_session" \
  || fail "the first call: approval '$id', $(cat "$work/a1.out")"

"$boxmaker" call asked.echo '{"text": "again"}' --socket "$work/b.sock" --session s1 \
  --call a2 > "$work/a2.out" 2>&1
ran a2 && ! contains "$(cat "$work/a2.out")" 'waiting for approval' \
  && pass "asked.echo runs again in s1 unasked" || fail "asked.echo again: $(cat "$work/a2.out")"

# asked_again TAG TOOL SESSION [UID] WHAT
asked_again () {
  start "$1" "$2" "$3" "${4:-}"
  id=$(waiting "$1")
  [ -z "$id" ] || "$boxmaker" decline "$id" --reason "not approved" \
    --admin-socket "$work/admin.sock" > /dev/null
  wait "$started"
  [ -n "$id" ] && ! ran "$1" && contains "$(cat "$work/$1.out")" 'the owner declined: not approved' \
    && pass "$5 is asked again, and does not run unapproved" \
    || fail "$5 rode the approval of asked.echo in s1: $(cat "$work/$1.out")"
}
asked_again b1 asked.pid s1 "" "another tool of the same server (asked.pid)"
asked_again b2 other.echo s1 "" "the same tool name on another server (other.echo)"
asked_again b3 asked.echo s2 "" "asked.echo in another session"
asked_again b4 asked.echo s1 65534 "asked.echo in the same session from another uid"

# Its two lines (running, then the result) and no others: the owner can tell from the log.
n=$(grep -c '"state":"remembered"' "$work/audit.log")
n_a2=$(grep -c '"call":"a2","tool":"asked.echo".*"state":"remembered"' "$work/audit.log")
[ "$n" = 2 ] && [ "$n_a2" = 2 ] \
  && pass "only asked.echo's second call in s1 ran on the remembered approval" \
  || fail "$n audit line(s) of a remembered approval: $(grep remembered "$work/audit.log")"
finish
