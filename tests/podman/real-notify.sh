#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# systemd's notification socket is brokerd's alone.  Under Type=notify brokerd gets
# NOTIFY_SOCKET; podman that inherited it set MAINPID to conmon's pid and handed the socket
# to the container (the journal logged "Got notification message from PID N, but reception
# only permitted for main PID M" for every call).  Here a listener of the test's own stands
# in for systemd: it records the sender's pid of every message (SO_PASSCRED), brokerd runs
# one call with podman.so and real podman, and every message must come from brokerd.
#
#   real-notify.sh BROKERD BOXMAKER RUNTIMEDIR IMAGE_REF_FILE
. "$(dirname "$0")/../common/wait_socket.sh"
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 ref_file=$4

image=$(cat "$ref_file" 2>/dev/null || true)
case $image in
  "") echo "SKIP notify with real podman: no image reference (its setup test did not run)"
      [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1; exit 77 ;;
  unusable:*) echo "SKIP notify with real podman: podman is $image"; exit 77 ;;
esac
command -v python3 >/dev/null 2>&1 || { echo "SKIP notify with real podman: no python3"; exit 77; }

work=$(mktemp -d /tmp/bx-notify-real.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/notify.sock" "$work/messages" <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = "?"
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = str(struct.unpack("iII", payload[:12])[0])
        out.write(pid + " " + data.decode(errors="replace").replace("\n", "|") + "\n")
PY
pids="$pids $!"
wait_socket "$work/notify.sock" $!

mkdir -p "$work/grant" "$work/home"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
grants:
  - tools: [shell]
    paths: [$work/grant]
YAML
NOTIFY_SOCKET=$work/notify.sock "$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" \
  2> "$work/brokerd.log" &
bpid=$!
pids="$pids $bpid"
wait_socket "$work/b.sock" $!
out=$("$boxmaker" call shell '{"command":"echo ran; echo NOTIFY_SOCKET=$NOTIFY_SOCKET"}' \
        --socket "$work/b.sock" --session notify-$$ 2>&1)
kill -TERM $bpid
wait $bpid
sleep 0.5

failures=0
case $out in
  *ran*) echo "ok: the call ran ($out)" ;;
  *) echo "FAIL: the call did not run: $out"; cat "$work/brokerd.log"; failures=1 ;;
esac
echo "messages (sender pid, text):"
cat "$work/messages"
grep -q "^$bpid READY=1" "$work/messages" \
  || { echo "FAIL: brokerd's own READY=1 was not received"; failures=1; }
others=$(grep -v "^$bpid " "$work/messages" || true)
if [ -n "$others" ]; then
  echo "FAIL: messages from processes other than brokerd ($bpid): $others"
  failures=1
else
  echo "ok: every message came from brokerd"
fi
case $out in
  *NOTIFY_SOCKET=/*) echo "FAIL: the sandbox saw NOTIFY_SOCKET: $out"; failures=1 ;;
esac
[ $failures -eq 0 ] || exit 1
echo "real-notify: all as expected"
