#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bwrap.so's pool (sandboxes made ahead of their calls) with real bubblewrap, through
# brokerd and `boxmaker call`: the pool fills at start; read_file, write_file and shell run
# in pooled sandboxes (brokerd's debug log says so), with their folders mounted in as a
# call's own sandbox has them (nosuid, nodev, protected paths read-only, the root read-only)
# and nothing of one call seen by the next; a call with another file size limit runs in a
# sandbox of its own with its limit; a pooled sandbox killed from outside costs no call;
# each has its call's mounter made ahead, which the call uses, and one killed costs no call;
# calls at once beyond the pool all answer; the pool is full again after them; while a call
# runs and a sandbox is still ready, no other is made beside it; nothing of the pool
# outlives brokerd; without a pool, calls take the slots in turn; a pool larger than the
# slots is refused at start.
#
#   pool.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5

skip () {
  echo "SKIP bwrap.so's pool with real bubblewrap: $*"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (the cgroups of the limits, a root-owned rootfs)"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
. "$(dirname "$0")/cgroup-host.sh"
. "$(dirname "$0")/../common/wait_socket.sh"
. "$(dirname "$0")/../common/still_runs.sh"
cg_host bwrap-pool
[ -n "$cg_kind" ] || skip "$cg_why"

work=$(mktemp -d /tmp/bx-bwrap-pool.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
  cg_cleanup
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

"$build_image" --quiet --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "build-image.sh --rootfs"; exit 1; }
mkdir -p "$work/grant" "$work/small" "$work/home" "$work/closed/inner"
# A folder the sandbox's uid cannot reach: bubblewrap, as that uid, cannot mount it, so a
# sandbox made ahead must not either (its mounts are made by root).
chmod 0700 "$work/closed"
chmod 0777 "$work/closed/inner"
echo "behind a closed folder" > "$work/closed/inner/secret.txt"
chmod 0777 "$work/grant" "$work/small"
echo "read through the pool" > "$work/grant/hello.txt"
# A protected path the sandbox's uid could write but for its read-only mount.
echo "export SAFE=1" > "$work/grant/.profile"
chmod 0666 "$work/grant/.profile"

# start_brokerd NAME POOL SLOTS: brokerd with --debug, on $work/NAME.sock; sets $bpid.
start_brokerd () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: $3
    pool: $2
    $cg_option
grants:
  - tools: [read_file, write_file, shell]
    paths: [$work/grant]
    class: private
  - tools: [shell]
    paths: [$work/small]
    class: private
    limits: {file_size: 1m}
  - tools: [read_file]
    paths: [$work/closed/inner]
    class: private
YAML
  "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" --debug 2> "$work/$1.log" &
  bpid=$!
  pids="$pids $bpid"
  wait_socket "$work/$1.sock" $!
}

# The toolkit processes of brokerd $1's slots that run "toolkit wait": one per sandbox made
# ahead.
waiting () {
  for procs in "$cg_slots/$1"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      [ "$(cat "/proc/$t/comm" 2>/dev/null)" = toolkit ] || continue
      case $(tr '\0' ' ' < "/proc/$t/cmdline" 2>/dev/null) in
        *"/bin/toolkit wait ") echo "$t" ;;
      esac
    done
  done
}
# The slots of brokerd $1 that hold a task still running besides their keeper.
busy_slots () {
  busy=0
  for procs in "$cg_slots/$1"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      [ "$(cat "/proc/$t/comm" 2> /dev/null)" != bwrap-keeper ] && still_runs "$t" \
        && { busy=$((busy + 1)); break; }
    done
  done
  echo $busy
}
# The tasks in brokerd $1's slots but its keepers and their mounters: the sandboxes made
# ahead, bubblewrap with them, while no call runs.
sandbox_tasks () {
  for procs in "$cg_slots/$1"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      [ "$(cat "/proc/$t/comm" 2> /dev/null)" = bwrap-keeper ] || echo "$t"
    done
  done
}
# The mounters made ahead in brokerd $1's slots: bwrap-keeper tasks whose parent is a keeper,
# not brokerd.
spare_mounters () {
  for procs in "$cg_slots/$1"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      [ "$(cat "/proc/$t/comm" 2>/dev/null)" = bwrap-keeper ] || continue
      [ "$(awk '/^PPid:/ { print $2 }' "/proc/$t/status" 2>/dev/null)" = "$1" ] || echo "$t"
    done
  done
}
# dead TID...: until each task TID has ended (a zombie, or gone), 10 s at most.  A kill only
# sends the signal: a call sent before its task has died could still be given it, which the
# module finds dead only when it uses it.
dead () {
  for t in "$@"; do
    i=0
    while [ $i -lt 100 ]; do
      state=$(sed 's/.*) //' "/proc/$t/stat" 2> /dev/null | cut -d' ' -f1)
      case $state in "" | Z | X) break ;; esac
      sleep 0.1
      i=$((i + 1))
    done
  done
}
# wait_ready PID N: until N sandboxes of brokerd PID wait (30 s at most).
wait_ready () {
  t=$(( $(date +%s) + 30 ))
  while [ "$(waiting "$1" | wc -l)" -lt "$2" ]; do
    [ "$(date +%s)" -lt $t ] || return 1
    sleep 0.1
  done
}

n=0
call () { # TOOL JSON: sets $out, $rc
  n=$((n + 1))
  out=$("$boxmaker" call "$1" "$2" --socket "$work/p.sock" --session pool --call "c$n" 2> "$work/err")
  rc=$?
}
pooled () { grep -c "runs in a sandbox made ahead" "$work/p.log"; }

start_brokerd p 2 4
[ -S "$work/p.sock" ] || { cat "$work/p.log"; fail "brokerd with pool: 2 did not start"; exit 1; }
p_pid=$bpid
wait_ready "$p_pid" 2 && pass "two sandboxes wait for their calls after start" \
  || fail "the pool did not fill: $(waiting "$p_pid" | wc -l) waiting"

before=$(pooled)
call read_file "{\"path\":\"$work/grant/hello.txt\"}"
[ $rc -eq 0 ] && [ "$out" = "read through the pool" ] && [ "$(pooled)" -eq $((before + 1)) ] \
  && pass "read_file runs in a sandbox made ahead" || fail "read_file: rc=$rc $out"

wait_ready "$p_pid" 2
call write_file "{\"path\":\"$work/grant/w.txt\",\"content\":\"written\"}"
[ $rc -eq 0 ] && [ "$(cat "$work/grant/w.txt" 2>/dev/null)" = written ] \
  && pass "write_file writes through a pooled sandbox" || fail "write_file: rc=$rc $out"

# What the call's sandbox sees: its folder's mount and flags, a protected path read-only,
# the root read-only, and the /tmp of the call alone.
wait_ready "$p_pid" 2
before=$(pooled)
call shell "{\"command\":\"grep ' $work/grant ' /proc/self/mountinfo | cut -d' ' -f6; echo x 2>&1 >> .profile; touch /x 2>&1; ls /tmp; echo mark > /tmp/mark; id -u\",\"cwd\":\"$work/grant\"}"
[ "$(pooled)" -eq $((before + 1)) ] || fail "the shell call did not run in a pooled sandbox"
contains "$out" "rw,nosuid,nodev" && pass "the granted folder is mounted rw,nosuid,nodev" \
  || fail "the granted folder's mount: $out"
contains "$out" ".profile: Read-only file system" \
  && pass "a protected path is read-only in a pooled sandbox" || fail "protected path: $out"
contains "$out" "touch: /x: Read-only file system" && pass "the root is read-only again" \
  || fail "root: $out"
contains "$out" "65534" || fail "not the sandbox's uid: $out"
[ "$(cat "$work/grant/.profile")" = "export SAFE=1" ] || fail "the protected .profile was written"
wait_ready "$p_pid" 2
call shell "{\"command\":\"cat /tmp/mark 2>&1; ls -a /tmp\",\"cwd\":\"$work/grant\"}"
contains "$out" "No such file" && pass "the next call's /tmp does not hold the last one's file" \
  || fail "a pooled sandbox kept a file of another call: $out"

# A grant's file size limit other than the option's: a sandbox of its own, with the limit.
wait_ready "$p_pid" 2
before=$(pooled)
call shell "{\"command\":\"dd if=/dev/zero of=big bs=1024 count=2048 2>&1; ls -l big\",\"cwd\":\"$work/small\"}"
size=$(stat -c %s "$work/small/big" 2>/dev/null || echo 0)
[ "$size" -le 1048576 ] && [ "$(pooled)" -eq "$before" ] \
  && pass "a 1m file size limit holds in a sandbox of the call's own ($size bytes)" \
  || fail "file size limit: $size bytes, pooled $(pooled) (was $before): $out"

# A grant its uid cannot reach: the call fails as without a pool, and the log says why.
wait_ready "$p_pid" 2
call read_file "{\"path\":\"$work/closed/inner/secret.txt\"}"
! contains "$out" "behind a closed folder" && [ $rc -ne 0 ] \
  && grep -q "cannot mount the call's folders into a pooled sandbox (Permission denied)" "$work/p.log" \
  && pass "a grant its uid cannot reach is not mounted: $(cat "$work/err")" \
  || fail "a grant behind a closed folder: rc=$rc $out $(cat "$work/err")"

# A pooled sandbox killed by a process of the sandbox's uid: the next call still answers.
wait_ready "$p_pid" 2
sandboxes=$(sandbox_tasks "$p_pid")
for t in $(waiting "$p_pid"); do setpriv --reuid=65534 --regid=65534 --clear-groups kill -9 "$t"; done
# Until both sandboxes have ended, bubblewrap with them (the pool looks at them only when a
# call comes, so it makes none meanwhile).
dead $sandboxes
before=$(pooled)
call read_file "{\"path\":\"$work/grant/hello.txt\"}"
[ $rc -eq 0 ] && [ "$out" = "read through the pool" ] \
  && pass "a call after its pooled sandboxes were killed answers" || fail "after the kill: rc=$rc $out"
[ "$(pooled)" -eq $((before + 1)) ] && pass "it ran in a sandbox made after the kill" \
  || fail "after the kill, the call did not run in a sandbox made ahead"
grep "runs in one of its own" "$work/p.log" | grep -v "Permission denied" \
  && fail "a call was given a killed sandbox"

# Each sandbox made ahead has its call's mounter made ahead beside it (root's, a clone of the
# keeper), which the call uses up; one killed from outside costs no call: the keeper clones
# the mounter when the call comes, as without one.
wait_ready "$p_pid" 2
i=0
while [ "$(spare_mounters "$p_pid" | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
spares=$(spare_mounters "$p_pid" | tr '\n' ' ')
[ "$(echo $spares | wc -w)" -eq 2 ] && pass "each sandbox made ahead has its mounter made ahead" \
  || fail "mounters made ahead: '$spares'"
call read_file "{\"path\":\"$work/grant/hello.txt\"}"
used=0
for s in $spares; do [ -e "/proc/$s" ] || used=$((used + 1)); done
[ $rc -eq 0 ] && [ "$out" = "read through the pool" ] && [ $used -ge 1 ] \
  && pass "a call uses up its sandbox's mounter made ahead" || fail "mounter made ahead: rc=$rc $out, $used used"
wait_ready "$p_pid" 2
i=0
while [ "$(spare_mounters "$p_pid" | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
killed=$(spare_mounters "$p_pid")
for s in $killed; do kill -9 "$s"; done
dead $killed
before=$(pooled)
call write_file "{\"path\":\"$work/grant/spare.txt\",\"content\":\"no spare\"}"
[ $rc -eq 0 ] && [ "$(cat "$work/grant/spare.txt" 2>/dev/null)" = "no spare" ] \
  && [ "$(pooled)" -eq $((before + 1)) ] \
  && pass "with the mounters made ahead killed, a call still runs in a sandbox made ahead" \
  || fail "after killing the mounters made ahead: rc=$rc $out, pooled $(pooled) (was $before)"

# Six calls at once against two sandboxes made ahead and four slots.
wait_ready "$p_pid" 2
for i in 1 2 3 4 5 6; do
  ( "$boxmaker" call shell "{\"command\":\"sleep 0.3; echo at-once-$i\",\"cwd\":\"$work/grant\"}" \
      --socket "$work/p.sock" --session pool --call "m$i" > "$work/many$i" 2>&1 ) &
done
wait_many=0
for i in 1 2 3 4 5 6; do
  t=$(( $(date +%s) + 60 ))
  while ! grep -q "at-once-$i" "$work/many$i" 2>/dev/null && [ "$(date +%s)" -lt $t ]; do sleep 0.1; done
  grep -q "at-once-$i" "$work/many$i" && wait_many=$((wait_many + 1))
done
[ $wait_many -eq 6 ] && pass "six calls at once, four slots, two made ahead: all answered" \
  || fail "only $wait_many of six calls at once answered: $(cat "$work"/many*)"
wait_ready "$p_pid" 2 && pass "the pool is full again after them" \
  || fail "the pool did not fill again: $(waiting "$p_pid" | wc -l) waiting"

# While a call runs and the other sandbox is still ready, the pool makes none beside it (it
# would share the CPU with the call): two slots busy, the call's and the ready one's, for
# the whole call, from the moment its command runs (its marker file is there) to the
# moment it ends (the marker gone); after it, the pool fills again.
wait_ready "$p_pid" 2
rm -f "$work/grant/in-call"
"$boxmaker" call shell "{\"command\":\"touch in-call; sleep 3; rm in-call; echo long\",\"cwd\":\"$work/grant\"}" \
  --socket "$work/p.sock" --session pool --call long > "$work/long" 2>&1 &
long=$!
most=0
while kill -0 "$long" 2> /dev/null && [ ! -e "$work/grant/in-call" ]; do sleep 0.05; done
while [ -e "$work/grant/in-call" ]; do
  b=$(busy_slots "$p_pid")
  # Counted only if the call still ran when the count ended: after it, the pool refills.
  [ ! -e "$work/grant/in-call" ] || [ "$b" -le "$most" ] || most=$b
  sleep 0.2
done
wait "$long"
grep -q long "$work/long" && [ "$most" -eq 2 ] \
  && pass "while a call ran with a sandbox still ready, no other was made: at most $most slots busy" \
  || fail "during a call: at most $most slots busy (2 expected): $(cat "$work/long")"
wait_ready "$p_pid" 2 && pass "the pool is full again after it" \
  || fail "the pool did not fill again after the long call: $(waiting "$p_pid" | wc -l) waiting"

# Nothing of the pool outlives its brokerd.
left=$(waiting "$p_pid" | tr '\n' ' ')
kill "$p_pid"
wait "$p_pid" 2>/dev/null
still=
for t in $left; do [ -d "/proc/$t" ] && still="$still $t"; done
[ -z "$still" ] && pass "the pool's sandboxes end with brokerd" \
  || fail "pooled sandboxes left after brokerd:$still"

# Without a pool, calls one after another take the free slots in turn, not the first one
# again (docs/config.md, bwrap.so's options): the slot a call has just given back may still
# be torn down by the kernel.
start_brokerd turn 0 3
# The slot folder that holds a toolkit of brokerd $1, once one runs (10 s at most).
slot_of_call () {
  for k in $(seq 100); do
    for procs in "$cg_slots/$1"-*/*/cgroup.procs; do
      for t in $(cat "$procs" 2>/dev/null); do
        [ "$(cat "/proc/$t/comm" 2>/dev/null)" = toolkit ] && { dirname "$procs"; return; }
      done
    done
    sleep 0.1
  done
}
seen=
for k in 1 2 3; do
  "$boxmaker" call shell "{\"command\":\"sleep 1\",\"cwd\":\"$work/grant\"}" \
    --socket "$work/turn.sock" --session pool --call "turn$k" > /dev/null 2>&1 &
  c=$!
  seen="$seen $(slot_of_call "$bpid")"
  wait "$c"
done
[ "$(echo $seen | tr ' ' '\n' | sort -u | wc -l)" -eq 3 ] \
  && pass "three calls one after another took three slots in turn" \
  || fail "the slots of three calls in a row:$seen"

# A pool larger than the slots: refused at start, naming the option.
start_brokerd big 5 4
if [ -S "$work/big.sock" ]; then
  fail "brokerd started with pool 5 and 4 slots"
else
  contains "$(cat "$work/big.log")" "option pool" && pass "pool 5 with 4 slots is refused: $(grep -o 'option pool.*' "$work/big.log" | head -1)" \
    || fail "pool 5 with 4 slots: $(cat "$work/big.log")"
fi

if [ $failures -ne 0 ]; then
  echo "brokerd's log:"; cat "$work/p.log"
  exit 1
fi
echo "bwrap.so's pool: all as expected"
