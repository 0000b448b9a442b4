#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# No uid a sandbox may run as is an owner on the admin socket.  brokerd runs as an
# unprivileged user (4243, a member of the admin group 4244, as a rootless service is): its
# sandboxes run as that uid (bwrap.so) or map it (rootless podman), and a file a sandbox left
# setuid would run as it.  So that uid is refused, with the admin group or without, and so is
# the overflow uid 65534 (bwrap.so's default sandbox uid); an owner in the group and root are
# served.  Needs no sandbox, so it runs once, with the refusing runtime.
if [ "${BX_CONTAINMENT_MODULE:-podman}" = bwrap ]; then
  echo "SKIP approval_admin_uid: does not apply to bwrap.so: no sandbox runs (the admin"
  echo "socket alone); it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=refusing
. "$(dirname "$0")/lib.sh"

svc=4243 admins=4244 owner=4245
mkdir -p "$work/run" "$work/g"
chown "$svc:$svc" "$work/run"
chmod 0755 "$work/run" "$work/g"
cat > "$work/b.yaml" <<YAML
socket: $work/run/b.sock
socket_mode: 0666
admin_socket: $work/run/admin.sock
admin_group: $admins
home: $work/run/home
grants:
  - tools: [read_file]
    paths: [$work/g]
    approval: always
YAML
chmod 0644 "$work/b.yaml"
setpriv --reuid=$svc --regid=$svc --groups=$admins \
  "$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/run/admin.sock" $!
[ -S "$work/run/admin.sock" ] || { fail "brokerd did not start"; finish; }

# list_as UID GROUPS: the exit status of `boxmaker approvals` as UID with GROUPS
# (0 listed, 1 refused by brokerd); its output in $out.
list_as () {
  if [ "$1" = 0 ]; then
    out=$("$boxmaker" approvals --admin-socket "$work/run/admin.sock" 2>&1)
  else
    out=$(setpriv --reuid="$1" --regid="$1" --groups="$2" \
            "$boxmaker" approvals --admin-socket "$work/run/admin.sock" 2>&1)
  fi
}
list_as $svc $svc
[ $? = 1 ] && contains "$out" "not allowed" && pass "brokerd's own uid is refused ($out)" \
  || fail "brokerd's own uid: $out"
list_as $svc $admins
[ $? = 1 ] && contains "$out" "not allowed" \
  && pass "brokerd's own uid carrying the admin group is refused" \
  || fail "brokerd's own uid with the admin group: $out"
list_as 65534 $admins
[ $? = 1 ] && contains "$out" "not allowed" && pass "the overflow uid 65534 is refused" \
  || fail "uid 65534 with the admin group: $out"
list_as $owner $admins
[ $? = 0 ] && pass "an owner in the admin group is served ($out)" || fail "an owner: $out"
list_as 0
[ $? = 0 ] && pass "root is served" || fail "root: $out"
finish
