#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bwrap.so under systemd on cgroup v2, as a packaged service runs it: a unit of the test's own
# with Delegate=yes, an ExecStartPre that checks the config (a brokerd that makes its slots
# and ends), and an ExecReload.  brokerd moves itself into a leaf of the service's cgroup
# and makes its slots beside it with the limits in memory.max, memory.swap.max, pids.max and
# cpu.max; a sandbox runs in a slot; the memory limit ends in its fixed sentence; reload and
# restart work; after stop nothing of it is left.  Skips (77) where systemd is not PID 1 or
# the hierarchy is not cgroup v2.
#
#   systemd-v2.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5

skip () { echo "SKIP bwrap.so under systemd on cgroup v2: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -d /run/systemd/system ] || skip "systemd is not PID 1 here"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || skip "the cgroup hierarchy is not v2"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"

unit=bx-bwrap-v2-$$
work=$(mktemp -d /tmp/bx-bwrap-v2.XXXXXX)
chmod 0755 "$work"
cleanup () {
  systemctl stop "$unit.service" 2>/dev/null
  rm -f "/run/systemd/system/$unit.service"
  systemctl daemon-reload
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

"$build_image" --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; echo "FAIL: build-image.sh --rootfs"; exit 1; }
mkdir -p "$work/grant"
chmod 0777 "$work/grant"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 2
    memory: 32m
    pids: 16
    shell_ms: 1000000
grants:
  - tools: [shell]
    paths: [$work/grant]
YAML
cat > "/run/systemd/system/$unit.service" <<UNIT
[Service]
Type=exec
Delegate=yes
ExecStartPre=$brokerd --check-config $work/b.yaml --runtimedir $runtimedir
ExecStart=$brokerd --config $work/b.yaml --runtimedir $runtimedir
ExecReload=/bin/kill -HUP \$MAINPID
UNIT
systemctl daemon-reload

wait_socket () {
  i=0
  while [ ! -S "$work/b.sock" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
  [ -S "$work/b.sock" ] || { journalctl -u "$unit" --no-pager | tail -20; echo "FAIL: brokerd did not start"; exit 1; }
}
n=0
call () {
  n=$((n + 1))
  "$boxmaker" call shell "$1" --socket "$work/b.sock" --session v2 --call "c$n" \
    > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
}

systemctl start "$unit.service" || { journalctl -u "$unit" --no-pager | tail -20; echo "FAIL: start"; exit 1; }
wait_socket
cg=/sys/fs/cgroup$(systemctl show -P ControlGroup "$unit.service")
main=$(systemctl show -P MainPID "$unit.service")
echo "service cgroup $cg, brokerd $main"
grep -qx "0::${cg#/sys/fs/cgroup}/brokerd" "/proc/$main/cgroup" \
  && pass "brokerd moved itself into a leaf of its own, $cg/brokerd" \
  || fail "brokerd is in $(cat "/proc/$main/cgroup")"
grep -qw memory "$cg/cgroup.subtree_control" && grep -qw pids "$cg/cgroup.subtree_control" \
  && grep -qw cpu "$cg/cgroup.subtree_control" \
  && pass "the service's cgroup hands memory, pids and cpu down: $(cat "$cg/cgroup.subtree_control")" \
  || fail "subtree_control: $(cat "$cg/cgroup.subtree_control")"
slots=0 good=0
for slot in "$cg/boxmaker-bwrap/$main"-*/*/; do
  [ -d "$slot" ] || continue
  slots=$((slots + 1))
  seen="$(cat "$slot/memory.max") $(cat "$slot/memory.swap.max" 2>/dev/null || echo 0) $(cat "$slot/pids.max") $(cat "$slot/cpu.max")"
  [ "$seen" = "33554432 0 17 100000 100000" ] && good=$((good + 1)) || echo "slot $slot: $seen"
  [ "$(cat "$slot/cgroup.procs" | wc -l)" = 1 ] || fail "slot $slot holds $(cat "$slot/cgroup.procs")"
done
[ $slots = 2 ] && [ $good = 2 ] \
  && pass "2 slots: memory.max 32m, memory.swap.max 0, pids.max 16+1, cpu.max one CPU, a keeper each" \
  || fail "$slots slots, $good as configured"

# A sandbox is born in a slot: find it while it runs.  The marker follows the sleep, so
# that the sandbox's shell stays to run it (a shell execs a last command in its place, and
# the marker would go with it).
"$boxmaker" call shell '{"command":"sleep 60; echo bx-v2-marker"}' --socket "$work/b.sock" \
  --session v2 --call hold > /dev/null 2>&1 &
holder=$!
# Until a process other than the client holds the marker: the sandbox has started.  By the
# clock: each look takes long under emulation.
t=$(( $(date +%s) + 50 ))
while [ -z "$(pgrep -f bx-v2-marker | grep -vx "$holder")" ] && [ "$(date +%s)" -lt $t ]; do
  sleep 0.1
done
# The marker is in the client's arguments too: the sandbox's processes are the others.
inner= where=
for p in $(pgrep -f bx-v2-marker); do
  [ "$p" = "$holder" ] && continue
  where="$where $p:$(cat "/proc/$p/cgroup" 2>/dev/null)"
  case $(cat "/proc/$p/cgroup" 2>/dev/null) in
    "0::${cg#/sys/fs/cgroup}/boxmaker-bwrap/$main"-*/[01]) inner=$p ;;
  esac
done
[ -n "$inner" ] && pass "a sandbox runs in its slot: $(cat "/proc/$inner/cgroup")" \
  || fail "no sandbox process in a slot:$where"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

call '{"command":"echo hello from a slot"}'
[ $rc = 0 ] && contains "$out" "hello from a slot" && pass "a call runs" || fail "call: rc=$rc out=$out err=$err"
call '{"command":"x=$(head -c 60000000 /dev/zero | tr \\\\0 a); echo ${#x}"}'
[ $rc = 1 ] && contains "$err" "the tool was stopped: it ran out of memory or was killed" \
  && pass "over memory.max: stopped with the fixed sentence (memory.events oom_kill)" \
  || fail "memory: rc=$rc out=$out err=$err"
call '{"command":"for i in $(seq 40); do sleep 1 & done; echo spawned"}'
contains "$out" "fork" && pass "over pids.max: $(printf '%s' "$out" | head -n 1)" \
  || fail "pids: rc=$rc out=$out err=$err"

systemctl reload "$unit.service" && sleep 2 && call '{"command":"echo after reload"}'
contains "${out:-}" "after reload" && pass "systemctl reload (ExecReload in the delegated unit), then a call" \
  || fail "reload: rc=${rc:-} out=${out:-} $(journalctl -u "$unit" --no-pager | tail -5)"

rm -f "$work/b.sock"
systemctl restart "$unit.service" || fail "restart: $(journalctl -u "$unit" --no-pager | tail -5)"
wait_socket
call '{"command":"echo after restart"}'
contains "$out" "after restart" && pass "systemctl restart (ExecStartPre's check left the cgroup usable), then a call" \
  || fail "restart: rc=$rc out=$out err=$err"

systemctl stop "$unit.service"
[ ! -d "$cg" ] && pass "after stop nothing is left: $cg is gone" \
  || fail "left after stop: $(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')"

if [ $failures -ne 0 ]; then
  journalctl -u "$unit" --no-pager | tail -40
  exit 1
fi
echo "all as expected"
