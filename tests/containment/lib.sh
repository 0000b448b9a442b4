# SPDX-License-Identifier: Apache-2.0
# The adversarial suite's common part, sourced by every case.  A case plays a hostile model
# holding every granted tool and then checks the host: files, keys, processes, containers.
#
#   CASE.sh BROKERD BOXMAKER RUNTIMEDIR IMAGE_REF_FILE
#
# BX_CONTAINMENT_MODULE names the runtime module under test (default podman);
# BX_CONTAINMENT_OPTIONS, when set, is a file of YAML lines (indented four spaces) used as
# its options instead of podman's (a file holding "unusable: WHY" makes the case skip, saying
# why); BX_CONTAINMENT_SANDBOX_UID is the host uid its sandboxes write as.  The cases pass the options a module is expected to share with podman.so
# (shell_ms, read_file_ms, http_fetch_ms, file_size); outlive.sh and outlive_egress.sh also
# look at podman's own processes and names.  Each case uses names of its own (session cont-<pid>,
# a fresh folder) and removes only what it made.
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 ref_file=$4
module=${BX_CONTAINMENT_MODULE:-podman}
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../common/wait_socket.sh"
. "$(dirname "$0")/../common/still_runs.sh"
case_name=$(basename "$0" .sh)

# skip WHY: the host cannot run the case (a failure where CI requires the runtime).
skip () {
  echo "SKIP $case_name: $*"
  case $module in bwrap) required=${BX_REQUIRE_BWRAP:-0} ;; gvisor) required=${BX_REQUIRE_GVISOR:-0} ;; *) required=${BX_REQUIRE_PODMAN:-0} ;; esac
  [ "$required" = 1 ] && exit 1
  exit 77
}
# not_for MODULE WHY: the case does not apply to MODULE.so; says why and skips.
not_for () {
  [ "$module" = "$1" ] || return 0
  echo "SKIP $case_name: does not apply to $1.so: $2"
  exit 77
}

image=$(cat "$ref_file" 2>/dev/null || true)
if [ "$module" = podman ]; then
  case $image in
    "") skip "no image reference (the podman_real_setup test did not run)" ;;
    unusable:*) skip "podman is $image" ;;
  esac
fi
if [ -n "${BX_CONTAINMENT_OPTIONS:-}" ]; then
  case $(cat "$BX_CONTAINMENT_OPTIONS" 2>/dev/null) in
    "") skip "no options for $module.so in $BX_CONTAINMENT_OPTIONS" ;;
    unusable:*) skip "$module.so is $(cat "$BX_CONTAINMENT_OPTIONS")" ;;
  esac
fi

work=$(mktemp -d /tmp/bx-containment.XXXXXX)
chmod 0755 "$work"
BX_GVISOR_STATE=$work/gvisor-state
export BX_GVISOR_STATE
session=cont-$$
pids=
cleanup () {
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$module" = podman ]; then
    for c in $(podman ps -a --format '{{.Names}}' 2>/dev/null | grep -- "-$session-"); do
      podman rm -f -t 0 "$c" >/dev/null 2>&1
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

# The sandbox runs as an unprivileged uid of its own: folders a test grants for writing
# are given to it, the way docs/security.md tells an owner to.
sandbox_uid=${BX_CONTAINMENT_SANDBOX_UID:-700000000}
writable_folder () { mkdir -p "$1" && chown "$sandbox_uid:$sandbox_uid" "$1" && chmod 0777 "$1"; }

# extra_run: more podman run options (one YAML list item, quoted), for the next brokerd.
module_options () {
  if [ -n "${BX_CONTAINMENT_OPTIONS:-}" ]; then
    cat "$BX_CONTAINMENT_OPTIONS"
    # gvisor.so: a state folder of the case's own, so that cases run side by side and each
    # sees (and sweeps) only its own sandboxes.
    [ "$module" != gvisor ] || echo "    state_dir: $BX_GVISOR_STATE"
    return
  fi
  cat <<YAML
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never${extra_run:+, $extra_run}]
YAML
}

# start_brokerd NAME EXTRA_TOP_LEVEL_YAML EXTRA_OPTION_YAML GRANTS_YAML [ENV...]: writes
# $work/NAME.yaml and starts brokerd on $work/NAME.sock; sets $bpid.
start_brokerd () {
  name=$1 top=$2 opts=$3 grants=$4
  shift 4
  cat > "$work/$name.yaml" <<YAML
socket: $work/$name.sock
socket_mode: 0666
home: ${home:-$work/home}
$top
runtime:
  module: $module
  options:
$(module_options)
$opts
grants:
$grants
YAML
  env "$@" "$brokerd" --config "$work/$name.yaml" --runtimedir "$runtimedir" \
    ${BX_CONTAINMENT_POOL:+--debug} 2>> "$work/$name.log" &
  bpid=$!
  pids="$pids $bpid"
  wait_socket "$work/$name.sock" $!
  [ -S "$work/$name.sock" ] || { echo "brokerd $name did not start:"; cat "$work/$name.log"; exit 1; }
}

# slow_disk_brokerd NAME BPS GRANTS_YAML [OPTION_YAML]: start_brokerd NAME "" OPTION_YAML
# GRANTS_YAML with the disk of the case's folder slowed to BPS bytes a second for the
# sandboxes brokerd starts: a cgroup v1 blkio write throttle on its slots' keepers, which
# start every sandbox, and not on brokerd itself, whose own writes (its audit log) must not
# wait behind a call's.  Skips, saying why, without such a throttle or a block device under
# the folder.  When the case ends, the throttle is lifted first, so that what is still
# queued drains at full speed, and its cgroup is removed.  `throttled` prints the bytes
# written through it so far.
slow_disk_brokerd () {
  blkio=/sys/fs/cgroup/blkio
  if [ ! -f "$blkio/blkio.throttle.write_bps_device" ]; then
    echo "SKIP $case_name: no cgroup v1 blkio hierarchy with a write throttle at $blkio to slow the disk"
    exit 77
  fi
  dev=$(findmnt -n -o MAJ:MIN -T "$work" 2> /dev/null | tr -d ' ')
  [ -z "$dev" ] || [ ! -e "/sys/dev/block/$dev/partition" ] || dev=$(cat "/sys/dev/block/$dev/../dev")
  if [ -z "$dev" ] || [ ! -e "/sys/dev/block/$dev" ]; then
    echo "SKIP $case_name: the case's folder $work is on no block device ($dev) to slow"
    exit 77
  fi
  slow=$blkio/bx-containment-slow-$$
  mkdir "$slow" || { fail "cannot make $slow"; finish; }
  was=$(awk -F: '$2 == "blkio" { print $3 }' /proc/self/cgroup)
  trap 'echo $$ > "$blkio$was/cgroup.procs"; echo "$dev 0" > "$slow/blkio.throttle.write_bps_device"
    cleanup
    i=0; while ! rmdir "$slow" 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ -d "$slow" ] && echo "note: $slow could not be removed: $(cat "$slow/cgroup.procs")"' EXIT
  echo "$dev $2" > "$slow/blkio.throttle.write_bps_device" \
    || { fail "cannot throttle $dev in $slow"; finish; }
  echo $$ > "$slow/cgroup.procs"
  start_brokerd "$1" "" "${4:-}" "$3"
  echo "$bpid" > "$blkio$was/cgroup.procs"
  echo $$ > "$blkio$was/cgroup.procs"
}
throttled () { awk -v d="$dev" '$1 == d && $2 == "Write" { print $3 }' "$slow/blkio.throttle.io_service_bytes"; }

# wait_written FILE PID: until FILE holds something, while PID (a call run in the
# background) still runs, 120 s at most.
wait_written () {
  t=0
  while [ ! -s "$1" ] && kill -0 "$2" 2> /dev/null && [ $t -lt 1200 ]; do
    sleep 0.1
    t=$((t + 1))
  done
}

n=0
# call NAME TOOL JSON: sets $out, $err, $rc
call () {
  n=$((n + 1))
  "$boxmaker" call "$2" "$3" --socket "$work/$1.sock" --session "$session" --call "c$n" \
    > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
}

# bwrap.so: "TID COMM" for each task in the cgroup slots of this case's brokerds (named
# after their pids), their keepers aside, and the sandboxes its pool made ahead, which have
# served no call yet: bubblewrap and toolkit, all of them running "toolkit wait".
slot_tasks () {
  # v1: the pids hierarchy; v2: the subtree of the option cgroup_root.
  slots=$(module_options | sed -n 's/^ *cgroup_root: //p')
  for p in $pids; do
    for procs in "${slots:-/sys/fs/cgroup/pids}/boxmaker-bwrap/$p"-*/*/cgroup.procs; do
      [ -e "$procs" ] || continue
      for t in $(cat "$procs"); do
        comm=$(cat "/proc/$t/comm" 2> /dev/null) || continue
        [ "$comm" != bwrap-keeper ] || continue
        case $(tr '\0' ' ' < "/proc/$t/cmdline" 2> /dev/null) in
          *"/bin/toolkit wait ") continue ;;
        esac
        echo "$t $comm"
      done
    done
  done
}

# Sandboxes of this case still there (any state).  For another runtime,
# BX_CONTAINMENT_LEFT names a command that prints the names of its sandboxes still alive
# (given the session id as its argument).  bwrap.so's are its slots' tasks (slot_tasks) but
# those in the kernel's exit (still_runs).
containers_left () {
  if [ -n "${BX_CONTAINMENT_LEFT:-}" ]; then "$BX_CONTAINMENT_LEFT" "$session"; return; fi
  if [ "$module" = bwrap ]; then
    slot_tasks | while read -r t comm; do
      ! still_runs "$t" || echo "$comm[$t]"
    done
    return 0
  fi
  [ "$module" = podman ] || return 0
  podman ps -a --format '{{.Names}}' 2>/dev/null | grep -- "-$session-" || true
}

# bwrap.so: its slots' tasks (slot_tasks) in any state, bubblewrap's own processes aside,
# and slirp4netns once in the kernel's exit: what a call may not leave when it is answered
# (docs/config.md, "Nothing outlives a call").
left_in_slots () {
  [ "$module" = bwrap ] || return 0
  slot_tasks | while read -r t comm; do
    [ "$comm" = bwrap ] && continue
    [ "$comm" = slirp4netns ] && ! still_runs "$t" && continue
    echo "$comm[$t]"
  done
}

# wait_gone SECONDS: until no container of this case is left; 0 when none is.
wait_gone () {
  # Seconds of the clock, not turns of the loop: on a loaded machine one look at podman
  # takes seconds itself.
  t=$(( $(date +%s) + $1 ))
  while [ -n "$(containers_left)" ]; do
    [ "$(date +%s)" -lt $t ] || return 1
    sleep 0.1
  done
  return 0
}

# A static program the sandbox can run (the tools image has no compiler).
build_probe () {
  cc -static -O1 -o "$1" "$here/probe.c" 2> "$work/cc.log" \
    || { echo "cannot build the probe:"; cat "$work/cc.log"; exit 1; }
}

# The seccomp probe, built with the table both runtimes' filters are made from: the build's
# copy (BX_SECCOMP_PROBE, tests/containment/CMakeLists.txt) where there is one.
build_seccomp_probe () {
  if [ -n "${BX_SECCOMP_PROBE:-}" ]; then
    cp "$BX_SECCOMP_PROBE" "$1" || { echo "cannot copy the seccomp probe $BX_SECCOMP_PROBE"; exit 1; }
    return
  fi
  common="$here/../../runtimes/common"
  cc -static -O1 -I"$common" -o "$1" "$here/seccomp_probe.c" "$common/seccomp_table.c" \
    -l:libseccomp.a 2> "$work/cc.log" \
    || { echo "cannot build the seccomp probe:"; cat "$work/cc.log"; exit 1; }
}

finish () {
  left=$(containers_left)
  [ -z "$left" ] || fail "containers left: $left"
  # BX_CONTAINMENT_POOL: bwrap.so makes sandboxes ahead (its option pool); each call that
  # can must have run in one, its folders mounted in, but in a case that sets
  # pool_fallbacks (one that stops or kills what mounts them).
  if [ -n "${BX_CONTAINMENT_POOL:-}" ]; then
    own=$(cat "$work"/*.log 2>/dev/null | grep -c "runs in one of its own")
    [ "$own" -eq 0 ] || [ -n "${pool_fallbacks:-}" ] \
      || fail "$own call(s) could not use a sandbox made ahead"
    echo "calls in sandboxes made ahead: $(cat "$work"/*.log 2>/dev/null | grep -c "runs in a sandbox made ahead")"
  fi
  if [ $failures -ne 0 ]; then
    echo "brokerd logs:"; cat "$work"/*.log 2>/dev/null
    exit 1
  fi
  echo "$case_name: all as expected"
  exit 0
}
