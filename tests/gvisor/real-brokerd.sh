#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gvisor.so end to end through brokerd and `boxmaker call` with real runsc and a read-only
# root that build-image.sh --rootfs builds for this test: a shell sees gVisor's kernel
# (uname, dmesg), not the host's; a system call the sandbox makes is answered by gVisor's
# kernel (its own /proc/version); read_file and write_file through their grants; a read
# outside the grant denied; one mount in gVisor for a writable folder and its protected
# paths; the time limit's fixed sentence; the module's root unchanged by
# a call; after kill -9 of brokerd in the middle of a call the sandbox dies with its runsc
# and the next brokerd sweeps what is left.
#
#   real-brokerd.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5

skip () {
  echo "SKIP gvisor.so with real runsc: $*"
  [ "${BX_REQUIRE_GVISOR:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (runsc makes the sandboxes' cgroups and namespaces)"
command -v runsc >/dev/null || skip "runsc is not installed (apt-get install runsc)"

work=$(mktemp -d /tmp/bx-gvisor-real.XXXXXX)
chmod 0755 "$work"
bpid=
cgroup=/bx-gvisor-real-$$
cleanup () {
  [ -z "$bpid" ] || kill -9 "$bpid" 2>/dev/null
  wait 2>/dev/null
  for c in /sys/fs/cgroup/*$cgroup /sys/fs/cgroup$cgroup; do [ -d "$c" ] && rmdir "$c" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }

"$build_image" --quiet --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; echo "FAIL: cannot build the root"; exit 1; }
before=$(cd "$work/rootfs" && find . | sort | md5sum)
mkdir -p "$work/notes" "$work/out" "$work/secret"
echo "hello notes" > "$work/notes/a.txt"
echo "classified-xyz" > "$work/secret/s.txt"
# The sandbox writes as uid 201000 on the host (id_base 200000 + uid 1000).
chown 201000:201000 "$work/out"

start () {
  # A brokerd killed with -9 leaves its socket: wait for the new one's.
  rm -f "$work/broker.sock"
  cat > "$work/brokerd.yaml" <<YAML
socket: $work/broker.sock
socket_mode: 0666
home: $work/home
runtime:
  module: gvisor
  options:
    rootfs: $work/rootfs
    state_dir: $work/state
    cgroup_path: $cgroup
    shell_ms: ${1:-100000}
grants:
  - tools: [read_file]
    paths: [$work/notes]
    class: private
  - tools: [write_file, shell]
    paths: [$work/out]
    class: private
YAML
  "$brokerd" --config "$work/brokerd.yaml" --runtimedir "$runtimedir" 2>> "$work/brokerd.log" &
  bpid=$!
  i=0
  while [ ! -S "$work/broker.sock" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
  [ -S "$work/broker.sock" ] || { cat "$work/brokerd.log"; echo "FAIL: brokerd did not start"; exit 1; }
}
n=0
call () {
  n=$((n + 1))
  "$boxmaker" call "$1" "$2" --socket "$work/broker.sock" --session gv-$$ --call "c$n" \
    > "$work/o" 2> "$work/e"
  rc=$?
  out=$(cat "$work/o") err=$(cat "$work/e")
}

start
grep -q "gVisor platform ptrace" "$work/brokerd.log" && pass "brokerd's log names the platform" \
  || fail "no platform in the log: $(cat "$work/brokerd.log")"

host_release=$(uname -r)
call shell "{\"command\":\"uname -r; dmesg | head -n 1; cat /proc/version\",\"cwd\":\"$work/out\"}"
case $out in
  *"$host_release"*) fail "the sandbox sees the host's kernel: $out" ;;
  *"Starting gVisor"*) pass "uname and dmesg show gVisor's kernel: $(echo "$out" | head -n 2 | tr '\n' ' ')" ;;
  *) fail "no gVisor kernel in: $out $err" ;;
esac

call read_file "{\"path\":\"$work/notes/a.txt\"}"
case $out in *"hello notes"*) pass "read_file reads its grant" ;; *) fail "read_file: $out $err" ;; esac
call read_file "{\"path\":\"$work/secret/s.txt\"}"
case "$out$err" in *classified-xyz*) fail "read outside the grant: $out" ;; *) pass "a read outside the grant is denied" ;; esac
call write_file "{\"path\":\"$work/out/w.txt\",\"content\":\"written\"}"
if [ "$(cat "$work/out/w.txt" 2>/dev/null)" = written ] && [ "$(stat -c %u "$work/out/w.txt")" = 201000 ]; then
  pass "write_file writes through its grant as uid 201000"
else
  fail "write_file: $out $err ($(ls -ln "$work/out"))"
fi
# The grant's protected paths come with its folder's one bind: gVisor's kernel has a single
# mount at or below the folder while the placeholders are there (the containment cases check
# that they stay read-only).
call shell "{\"command\":\"grep -c ' $work/out[ /]' /proc/mounts; ls -a\",\"cwd\":\"$work/out\"}"
if [ "$(printf '%s\n' "$out" | head -n 1)" = 1 ] && printf '%s\n' "$out" | grep -qx .bashrc; then
  pass "one mount in gVisor's kernel for a writable folder and its protected paths"
else
  fail "mounts at or below the folder: $out $err"
fi
# The sandbox's root is never the host's: a file it makes in the root's tmp is gone, and the
# module's root is as built.
call shell "{\"command\":\"touch /bin/x 2>&1; echo > /x 2>&1; echo done\",\"cwd\":\"$work/out\"}"
after=$(cd "$work/rootfs" && find . | sort | md5sum)
[ "$before" = "$after" ] && pass "the module's root is unchanged by the calls" \
  || fail "the root changed: $(cd "$work/rootfs" && find . -newer "$work/build.log")"

kill "$bpid"; wait "$bpid" 2>/dev/null; bpid=
start 2000
call shell "{\"command\":\"sleep 30\",\"cwd\":\"$work/out\"}"
case $err in *"ran past its time limit"*) pass "the time limit's fixed sentence" ;; *) fail "time limit: $out $err" ;; esac

# kill -9 of brokerd in the middle of a call: runsc is left, with its own deadline (the
# call's limit and a margin); the next brokerd sweeps the sandbox's folder and state.
kill "$bpid"; wait "$bpid" 2>/dev/null; bpid=
start 100000
"$boxmaker" call shell "{\"command\":\"sleep 300\",\"cwd\":\"$work/out\"}" --socket "$work/broker.sock" \
  --session gv-$$ --call killed > /dev/null 2>&1 &
cpid=$!
i=0
while [ -z "$(ls "$work/state/boxes" 2>/dev/null)" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
kill -9 "$bpid"; wait "$bpid" 2>/dev/null; bpid=
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
[ -n "$(ls "$work/state/boxes")" ] && pass "a killed brokerd leaves its sandbox's folder" \
  || fail "nothing was left to sweep"
# runsc run of the dead brokerd: kill it as its deadline would, then the sandbox goes with it.
for p in $(pgrep -f "runsc --root $work/state/runsc"); do kill -9 "$p" 2>/dev/null; done
start
[ -z "$(ls "$work/state/boxes")" ] && pass "the next brokerd swept the dead one's sandbox" \
  || fail "left after the sweep: $(find "$work/state" | tr '\n' ' ')"
grep -q "removed 1 sandbox" "$work/brokerd.log" && pass "the sweep says so in the log" \
  || fail "no sweep line in the log"
[ -z "$(ls "$work/state/runsc")" ] && pass "runsc's state of the dead brokerd's sandbox is gone" \
  || fail "runsc state left: $(ls "$work/state/runsc")"
sleep 1
if pgrep -f "runsc-sandbox.*$work" > /dev/null || pgrep -f "runsc --root $work/state" > /dev/null; then
  fail "a runsc process of the dead brokerd still runs"
else
  pass "no runsc process of the dead brokerd runs"
fi

kill "$bpid"; wait "$bpid" 2>/dev/null; bpid=
if [ $failures -ne 0 ]; then
  echo "brokerd's log:"; cat "$work/brokerd.log"
  exit 1
fi
echo "gvisor.so with real runsc: all as expected"
