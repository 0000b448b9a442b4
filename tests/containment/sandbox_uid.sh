#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Issue 23, hole 1: the sandbox's uid is never brokerd's own user.  Under the packaged
# service brokerd runs as a user of its own, with rootless podman; a sandbox that ran as
# that user (podman's --userns=keep-id) could leave files, setuid ones included, owned by
# the uid that may approve calls on the admin socket and owns brokerd's runtime folder,
# home and logs.
#
# For podman.so the case makes a user of its own with subordinate ids (as README.Debian
# tells an administrator to), builds the tools image in that user's podman (BX_TOOLKIT
# names toolkit), runs brokerd as that user, and has a shell call and an http_fetch call
# write and reach what they may.  A grant is made writable for the sandbox with an ACL
# for its uid (setfacl, package acl), so that the test can also check that files written
# there stay changeable by the folder's owner (docs/config.md advises giving the folder to
# the sandbox's uid instead, for git's sake).  The per-uid kernel counters hold for
# rootless podman too: a call holding every inotify instance it can leaves one for another
# call and for brokerd's user.  On a cgroup v1 host
# rootless podman applies no memory, pids or CPU limit: brokerd must refuse to start there
# unless cgroup_limits is off; so on cgroup v2 without a user manager.  Under systemd on
# cgroup v2 the user gets its manager (loginctl enable-linger), and the limits hold.  For bwrap.so (run as root) the file's owner must not be
# root.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: the case makes a user of its own"

if [ "$module" != podman ]; then
  writable_folder "$work/w"
  start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"
  call b shell "{\"command\":\"echo hi > made; id -u\",\"cwd\":\"$work/w\"}"
  owner=$(stat -c %u "$work/w/made" 2>/dev/null)
  [ -n "$owner" ] && [ "$owner" != 0 ] && pass "a sandbox's file belongs to uid $owner, not brokerd's 0" \
    || fail "a sandbox's file belongs to '$owner' (brokerd is uid 0): rc=$rc out=$out err=$err"
  finish
fi

command -v setfacl >/dev/null 2>&1 || skip "setfacl is not installed (package acl)"
command -v useradd >/dev/null 2>&1 || skip "useradd is not installed"
toolkit=${BX_TOOLKIT:-}
[ -x "$toolkit" ] || skip "BX_TOOLKIT does not name the toolkit program"

# A user and subordinate ids of this case's own; a range far from those an administrator
# gives (100000..) and from the rootful one (700000000..).
user=bxsu$$
sub=$((1000000000 + ($$ % 20000) * 65536))
uhome=$work/user
undo_user () {
  [ -n "${upids:-}" ] && for p in $upids; do kill -9 "$p" 2>/dev/null; done
  if id "$user" >/dev/null 2>&1; then
    uid=$(id -u "$user")
    # Rootless podman leaves its pause process for the user: ours, ended by id.
    for p in $(ps -o pid= -u "$uid" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    sleep 0.2
    if [ -n "${linger:-}" ]; then
      loginctl disable-linger "$user" 2>/dev/null
      loginctl terminate-user "$user" 2>/dev/null
    fi
    usermod --del-subuids "$sub-$((sub + 65535))" --del-subgids "$sub-$((sub + 65535))" "$user" 2>/dev/null
    userdel "$user" 2>/dev/null
    rm -rf "/tmp/podman-run-$uid" "/tmp/containers-user-$uid" "/run/user/$uid/containers" "/run/user/$uid/libpod"
  fi
}
cleanup_user () { undo_user; cleanup; }
trap cleanup_user EXIT
useradd -M -d "$uhome" -s /usr/sbin/nologin -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 "$user" \
  || skip "cannot make the user $user"
usermod --add-subuids "$sub-$((sub + 65535))" --add-subgids "$sub-$((sub + 65535))" "$user" \
  || skip "cannot give $user subordinate ids"
uid=$(id -u "$user")
mkdir -p "$uhome"
chown "$user:$user" "$uhome"
# Under systemd on cgroup v2, rootless podman keeps the limits only through the user's own
# manager (docs/config.md): the user gets one, as README.Debian tells an administrator.
cgroups=$(stat -fc %T /sys/fs/cgroup)
linger=
session_env=
if [ "$cgroups" = cgroup2fs ] && [ -d /run/systemd/system ] && command -v loginctl >/dev/null 2>&1; then
  loginctl enable-linger "$user" || fail "loginctl enable-linger $user failed"
  linger=1
  i=0
  while [ ! -S "/run/user/$uid/bus" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
  [ -S "/run/user/$uid/bus" ] || { fail "no user manager for $user"; finish; }
  session_env="XDG_RUNTIME_DIR=/run/user/$uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus"
fi
as_user () {
  # shellcheck disable=SC2086
  (cd "$uhome" && setpriv --reuid="$user" --regid="$user" --init-groups \
     env -i HOME="$uhome" PATH=/usr/sbin:/usr/bin:/sbin:/bin $session_env "$@")
}

uimage=$(as_user "$here/../../packaging/image/build-image.sh" --quiet --toolkit "$toolkit" \
           --name "localhost/bx-sandbox-uid-$$" 2>"$work/build.log" | tail -n 1)
case $uimage in
  localhost/*@sha256:*) ;;
  *) cat "$work/build.log"; fail "cannot build the tools image as $user"; finish ;;
esac

# A grant the owner keeps, written by the sandbox through an ACL for its uid: new files
# inherit the default entries, so the owner can still change them.
mkdir -p "$work/g"
echo "from the owner" > "$work/g/owners.txt"
setfacl -R -m "u:$sub:rwX" -m "d:u:$sub:rwX" -m "d:u:$user:rwX" "$work/g"
chown -R "$user:$user" "$work/g"

# Rootless slirp4netns needs /dev/net/tun; where the user cannot open it, the proxy runs
# without a network: it still makes its socket and records what it refused.
network=slirp4netns
if ! as_user test -w /dev/net/tun; then
  network=none
  echo "note: $user cannot open /dev/net/tun: the egress proxy runs with --network=none"
fi

config () {
  cat > "$uhome/b.yaml" <<YAML
socket: $uhome/b.sock
socket_mode: 0666
home: $uhome/state
runtime:
  module: podman
  options:
    image: $uimage
    global_options: [--runtime, runc]
    run_options: [--pull=never]
    egress_network: $network
$1
grants:
  - tools: [shell, read_file]
    paths: [$work/g]
  - tools: [http_fetch]
    hosts: [nothing.invalid]
YAML
  chown "$user:$user" "$uhome/b.yaml"
}

# Where the host cannot keep the limits, brokerd does not start until they are turned off.
if [ "$cgroups" = cgroup2fs ] && [ -z "$linger" ]; then
  config ""
  msg=$(as_user "$brokerd" --check-config "$uhome/b.yaml" --runtimedir "$runtimedir" 2>&1) \
    && fail "brokerd --check-config accepts rootless podman without a user manager: $msg" \
    || { contains "$msg" "cgroup_limits: off" \
           && pass "rootless on cgroup v2 without a user manager: --check-config refuses, naming the way out" \
           || fail "rootless on cgroup v2 without a user manager: --check-config says: $msg"; }
  config "    cgroup_limits: off"
elif [ "$cgroups" != cgroup2fs ]; then
  config ""
  msg=$(as_user "$brokerd" --check-config "$uhome/b.yaml" --runtimedir "$runtimedir" 2>&1) \
    && fail "brokerd --check-config accepts rootless podman on cgroup v1: $msg" \
    || { contains "$msg" "rootless podman applies no memory, pids or CPU limit on a cgroup v1 host" \
           && contains "$msg" "cgroup_limits: off" \
           && pass "rootless on cgroup v1: --check-config refuses, naming why and the way out" \
           || fail "rootless on cgroup v1: --check-config says: $msg"; }
  config "    cgroup_limits: off"
else
  config ""
fi

as_user "$brokerd" --config "$uhome/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
bpid=$!
upids=$bpid
i=0
while [ ! -S "$uhome/b.sock" ] && [ $i -lt 1200 ] && kill -0 $bpid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
[ -S "$uhome/b.sock" ] || { cat "$work/b.log"; fail "brokerd as $user did not start"; finish; }
grep -q "sandboxes run as host uid $sub, gid $sub" "$work/b.log" \
  && pass "brokerd says sandboxes run as host uid $sub" \
  || fail "brokerd does not name the sandboxes' uid $sub"

ucall () {
  n=$((n + 1))
  "$boxmaker" call "$1" "$2" --socket "$uhome/b.sock" --session "$session" --call "c$n" \
    --timeout-ms 110000 > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
}
ucall shell "{\"command\":\"echo hi > made; mkdir d && echo x > d/f; echo more >> owners.txt; id -u\",\"cwd\":\"$work/g\"}"
owner=$(stat -c %u "$work/g/made" 2>/dev/null)
if [ -z "$owner" ]; then
  fail "the shell call wrote nothing: rc=$rc out=$out err=$err"
elif [ "$owner" = "$uid" ]; then
  fail "a sandbox's file belongs to brokerd's own uid $uid"
else
  [ "$owner" = "$sub" ] && pass "a sandbox's file belongs to the first subordinate uid $sub, not brokerd's $uid" \
    || fail "a sandbox's file belongs to $owner, expected $sub"
fi
[ "$(stat -c %u "$work/g/d/f" 2>/dev/null)" = "$sub" ] && contains "$(cat "$work/g/owners.txt")" more \
  && pass "through the ACL the sandbox writes new folders and the owner's files" \
  || fail "the ACL'd grant was not writable: $(ls -lnR "$work/g")"
# The owner keeps the sandbox's files: the default ACL gives them to it too.
as_user sh -c "echo owner >> '$work/g/made' && rm -r '$work/g/d'" \
  && pass "the owner ($user) can change and remove what the sandbox wrote" \
  || fail "the owner cannot change the sandbox's files: $(getfacl "$work/g/made" 2>&1)"

# http_fetch: the proxy (as the same subordinate uid) makes its socket in a folder brokerd's
# user made, and brokerd reads its records.
ucall http_fetch '{"url":"https://nothing.invalid/"}'
contains "$out$err" "runner could not start" \
  && fail "http_fetch as $user: the proxy did not start: $out $err" \
  || pass "http_fetch as $user reaches its proxy ($(echo "$out$err" | head -c 120))"
line=$(grep "\"c$n\"" "$work/b.log" | grep '"egress"' || true)
! grep -q "cannot read the egress records" "$work/b.log" && contains "$line" nothing.invalid \
  && pass "brokerd reads the proxy's records onto the audit line" \
  || fail "the proxy's records did not reach the audit line: $line"
# The kernel's per-uid counters of every container are charged to brokerd's user at the
# top (its user namespaces are that user's): one call takes all the inotify instances it
# can and holds them, and then a second call, and brokerd's user, can still make one.
cc -static -O1 -o "$work/g/ino" "$here/ino.c" 2> "$work/cc.log" \
  || { cat "$work/cc.log"; fail "cannot build the inotify program"; finish; }
chmod 0755 "$work/g/ino"
"$boxmaker" call shell "{\"command\":\"./ino hold $work/g\",\"cwd\":\"$work/g\"}" \
  --socket "$uhome/b.sock" --session "$session" --call hold --timeout-ms 110000 \
  > "$work/hold.out" 2>&1 &
holder=$!
upids="$upids $holder"
t=0
while [ ! -s "$work/g/took" ] && kill -0 $holder 2>/dev/null && [ $t -lt 1200 ]; do
  sleep 0.1
  t=$((t + 1))
done
if [ -s "$work/g/took" ]; then
  echo "the first call: $(cat "$work/g/took")"
else
  fail "the first call did not take its inotify instances: $(cat "$work/hold.out")"
fi
ucall shell "{\"command\":\"./ino one\",\"cwd\":\"$work/g\"}"
contains "$out" "inotify: ok" && pass "a second call makes an inotify instance ($out)" \
  || fail "a second call cannot make an inotify instance while the first holds them: rc=$rc out=$out err=$err"
mine=$(as_user "$work/g/ino" one)
contains "$mine" "inotify: ok" && pass "brokerd's user $user makes an inotify instance ($mine)" \
  || fail "brokerd's user cannot make an inotify instance while a call holds them: $mine"
touch "$work/g/release"
wait $holder
contains "$(cat "$work/hold.out")" "held" || fail "the holding call did not end well: $(cat "$work/hold.out")"

kill -TERM $bpid
wait $bpid
upids=
as_user podman ps -a --format '{{.Names}}' 2>/dev/null | grep -q "$session" \
  && fail "containers left in $user's podman"
finish
