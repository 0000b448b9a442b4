#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Approvals with real podman: brokerd with podman.so and the tools image that real-setup.sh
# built, a shell grant with `approval: always`.  A call waits (nothing runs: the file it
# would write is not there), `boxmaker approvals` lists it, `boxmaker approve` runs it in a
# container (the file appears, the caller gets the output); a second call is declined with
# a reason (the caller is denied with it, nothing ran); a third call's client leaves while
# it waits (nothing runs, even when approved afterwards).  No container of this test left.
#
#   real-approvals.sh BROKERD BOXMAKER RUNTIMEDIR IMAGE_REF_FILE
. "$(dirname "$0")/../common/wait_socket.sh"
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 ref_file=$4

image=$(cat "$ref_file" 2>/dev/null || true)
case $image in
  "") echo "SKIP approvals with real podman: no image reference (its setup test did not run)"
      [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1; exit 77 ;;
  unusable:*) echo "SKIP approvals with real podman: podman is $image"; exit 77 ;;
esac

work=$(mktemp -d /tmp/bx-approvals-real.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }
session=approvalsreal-$$

mkdir -p "$work/grant" "$work/home"
# The sandbox writes as uid 700000000 (podman.so's uidmap_base): the grant is given to it.
chown 700000000:700000000 "$work/grant"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
admin_socket: $work/admin.sock
admin_group: 4242
home: $work/home
audit: $work/audit.log
runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
grants:
  - tools: [shell]
    paths: [$work/grant]
    approval: always
    approval_timeout: 2m
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pids="$pids $!"
wait_socket "$work/admin.sock" $!
[ -S "$work/admin.sock" ] || { echo "brokerd did not start:"; cat "$work/brokerd.log"; exit 1; }

# start_call NAME COMMAND: the call in the background, its output in $work/NAME.*
start_call () {
  "$boxmaker" call shell "{\"command\":\"$2\",\"cwd\":\"$work/grant\"}" \
    --socket "$work/b.sock" --session "$session" --call "$1" \
    > "$work/$1.out" 2> "$work/$1.err" &
  eval "pid_$1=\$!"
}
# waiting_id: the approval id of the one waiting call (waits for it to be listed)
waiting_id () {
  i=0
  while [ $i -lt 1200 ]; do
    id=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" \
      | sed -n 's/.*"approval":"\([0-9a-f]\{32\}\)".*/\1/p')
    [ -n "$id" ] && { echo "$id"; return; }
    sleep 0.05; i=$((i + 1))
  done
}
no_containers () {
  left=$(podman ps -a --filter label=boxmaker --format '{{.Names}}' | grep -- "-$session-" || true)
  [ -z "$left" ] || fail "containers left: $left"
}

start_call c1 "echo approved > made.txt; cat made.txt"
id=$(waiting_id)
[ -n "$id" ] || fail "the call is not listed as waiting"
listing=$("$boxmaker" approvals --admin-socket "$work/admin.sock")
sleep 0.5
[ ! -e "$work/grant/made.txt" ] && contains "$listing" "shell in $work/grant, cwd $work/grant: echo approved" \
  && pass "a waiting call is listed and has not run" \
  || fail "before approval: listing=$listing made=$(ls "$work/grant")"
"$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > /dev/null
wait "$pid_c1"; rc=$?
[ $rc = 0 ] && [ "$(cat "$work/grant/made.txt" 2>/dev/null)" = approved ] \
  && contains "$(cat "$work/c1.out")" "approved" \
  && contains "$(cat "$work/c1.err")" "waiting for approval: $id" \
  && pass "an approved call runs in a container" \
  || fail "approve: rc=$rc out=$(cat "$work/c1.out") err=$(cat "$work/c1.err")"
no_containers

start_call c2 "touch declined.txt"
id=$(waiting_id)
"$boxmaker" decline "$id" --reason "not today" --admin-socket "$work/admin.sock" > /dev/null
wait "$pid_c2"; rc=$?
[ $rc = 1 ] && contains "$(cat "$work/c2.err")" "denied: the owner declined: not today" \
  && [ ! -e "$work/grant/declined.txt" ] \
  && pass "a declined call is denied with the reason and does not run" \
  || fail "decline: rc=$rc err=$(cat "$work/c2.err")"

# A client that leaves: its call ends and nothing runs, but the approval waits on (listed as
# client_left); approved then, the same call asked again runs at once on it.
start_call c3 "touch left.txt"
id=$(waiting_id)
kill "$pid_c3"; wait "$pid_c3" 2>/dev/null
i=0
until [ $i -ge 1200 ] || "$boxmaker" approvals --json --admin-socket "$work/admin.sock" \
        | grep -q "\"approval\":\"$id\".*\"client_left\":true"; do
  sleep 0.05; i=$((i + 1))
done
"$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > "$work/late" 2>&1; rc=$?
sleep 0.5
[ $rc = 0 ] && [ ! -e "$work/grant/left.txt" ] \
  && pass "a client that leaves: its call ends, nothing runs, the approval still waits" \
  || fail "client left: approve rc=$rc $(cat "$work/late"); files=$(ls "$work/grant")"
start_call c4 "touch left.txt"
wait "$pid_c4"; rc=$?
[ $rc = 0 ] && [ -e "$work/grant/left.txt" ] \
  && grep -q "\"call\":\"c4\".*\"outcome\":\"running\".*\"id\":\"$id\",\"state\":\"approved\"" "$work/audit.log" \
  && pass "the same call asked again runs on that approval" \
  || fail "asked again: rc=$rc err=$(cat "$work/c4.err"); files=$(ls "$work/grant")"
no_containers

grep -q '"state":"approved"' "$work/audit.log" && grep -q '"state":"declined"' "$work/audit.log" \
  && grep -q '"state":"cancelled"' "$work/audit.log" && pass "the audit log has each end" \
  || fail "audit: $(cat "$work/audit.log")"

if [ $failures -ne 0 ]; then
  echo "brokerd log:"; cat "$work/brokerd.log"
  exit 1
fi
echo "approvals with real podman as expected"
