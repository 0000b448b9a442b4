#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/run.sh [OPTIONS] -- COMMAND [ARG...]
#
# Boots the VM lane's Debian 12 image (tests/vm/build-image.sh) with qemu, runs COMMAND in it
# as root once systemd (PID 1, cgroup v2) has finished booting, prints its output (stdout and
# stderr together, as it comes) and exits with its status.  The image is never written: each
# run boots a throw-away overlay, so several runs may share one image at the same time.
# The VM has no network device.  Options:
#   --image DIR|FILE  the folder build-image.sh wrote (or its debian12.qcow2); default
#                     $BX_VM_IMAGE, else build/vm in this tree
#   --share DIR       DIR is mounted (9p, read-write) at the same path inside the VM, and
#                     /share points to it; COMMAND starts there (else in /root)
#   --env NAME=VALUE  put NAME in COMMAND's environment (repeatable)
#   --mem MB          the VM's memory (default 2048); --cpus N (default: the host's, up to 4)
#   --timeout S       bound on COMMAND, from the end of the boot (default 3600)
#   --boot-timeout S  bound on the boot (default 900 under emulation, 180 with KVM)
#   --journal FILE    copy the guest's journal of this boot to FILE
#   --console FILE    copy the guest's serial console to FILE (printed anyway when the VM fails)
# BX_VM_SLOWDOWN=N multiplies both bounds (a slower host).  BX_VM_ACCEL=kvm|tcg forces the
# accelerator; by default KVM is used when /dev/kvm opens and is not PVM (which boots no
# stock kernel), and a KVM boot that does not start falls back to software emulation.
# Exit status: COMMAND's; 124 when a bound ran out; 125 when the VM failed to run it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
image=${BX_VM_IMAGE:-$here/../../build/vm}
share=""
envs=()
mem=2048
cpus=$(nproc); [ "$cpus" -gt 4 ] && cpus=4
timeout=3600
boot_timeout=""
journal=""
console=""
usage() { sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image=$2; shift 2 ;;
    --share) share=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --boot-timeout) boot_timeout=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --console) console=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
[ -d "$image" ] && image=$image/debian12.qcow2
image=$(realpath "$image")
dir=$(dirname "$image")
for f in "$image" "$dir/vmlinuz" "$dir/initrd"; do
  [ -f "$f" ] || { echo "run.sh: $f is missing (tests/vm/build-image.sh --out $dir)" >&2; exit 125; }
done
if [ -n "$share" ]; then
  [ -d "$share" ] || { echo "run.sh: --share $share is not a folder" >&2; exit 125; }
  share=$(realpath "$share")
fi
slow=${BX_VM_SLOWDOWN:-1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bx-vm.XXXXXX")
ctl=$tmp/ctl
mkdir "$ctl"
qpid=""
cleanup() {
  [ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp "$here/guest-run" "$ctl/guest-run"
printf '%s\0' "$@" >"$ctl/cmd"
[ ${#envs[@]} -gt 0 ] && printf '%s\n' "${envs[@]}" >"$ctl/env"
[ -n "$share" ] && printf '%s' "$share" >"$ctl/share"

kvm_usable() {
  [ -e /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && { : <>/dev/kvm; } 2>/dev/null
}
case "${BX_VM_ACCEL:-}" in
  kvm|tcg) accel=$BX_VM_ACCEL ;;
  "") if kvm_usable; then accel=kvm; else accel=tcg; fi ;;
  *) echo "run.sh: BX_VM_ACCEL is kvm or tcg" >&2; exit 2 ;;
esac

# Prints the bytes of FILE past offset $2; echoes nothing when FILE is absent.
off=0
drain() {
  [ -f "$ctl/out" ] || return 0
  local size
  size=$(stat -c %s "$ctl/out")
  if [ "$size" -gt "$off" ]; then
    tail -c +$((off + 1)) "$ctl/out" | head -c $((size - off))
    off=$size
  fi
}

# Boots once with the accelerator $1; returns 0 when the VM powered off after writing a
# status, 1 when the boot did not reach the runner in time, 2 when the command's bound ran
# out, 3 when the VM stopped without a status.
boot() {
  local acc=$1 accel_opts bt t0 now limit state started="" booted=""
  rm -f "$tmp/disk.qcow2" "$ctl/started" "$ctl/booted" "$ctl/out" "$ctl/status" "$tmp/console.log"
  off=0
  qemu-img create -q -f qcow2 -F qcow2 -b "$image" "$tmp/disk.qcow2"
  if [ "$acc" = kvm ]; then
    accel_opts=(-accel kvm -cpu host)
    bt=${boot_timeout:-180}
  else
    accel_opts=(-accel "tcg,thread=multi" -cpu max)
    bt=${boot_timeout:-900}
  fi
  bt=$((bt * slow))
  local shareopts=()
  [ -n "$share" ] &&
    shareopts=(-virtfs "local,path=$share,mount_tag=bxshare,security_model=none,multidevs=remap")
  # podman-auto-update.service is enabled by its package and would run `podman auto-update`
  # at every boot (minutes under emulation), holding up the end of the boot: masked.
  # loglevel=4: only the kernel's errors reach the serial console.  Each out-of-memory kill
  # otherwise prints its whole report there, character by emulated character, for seconds
  # (the journal keeps it all).
  qemu-system-x86_64 "${accel_opts[@]}" -smp "$cpus" -m "$mem" \
    -nodefaults -no-user-config -display none -no-reboot \
    -serial "file:$tmp/console.log" \
    -kernel "$dir/vmlinuz" -initrd "$dir/initrd" \
    -append "root=/dev/vda rw console=ttyS0 loglevel=4 bx.run=1 systemd.unified_cgroup_hierarchy=1 systemd.show_status=1 panic=-1 systemd.mask=podman-auto-update.service" \
    -drive "file=$tmp/disk.qcow2,if=virtio,format=qcow2,cache=unsafe,discard=unmap" \
    -virtfs "local,path=$ctl,mount_tag=bxctl,security_model=none" \
    "${shareopts[@]}" </dev/null >"$tmp/qemu.log" 2>&1 &
  qpid=$!
  t0=$(date +%s)
  while kill -0 "$qpid" 2>/dev/null; do
    sleep 1
    drain
    now=$(date +%s)
    if [ -z "$started" ] && [ -f "$ctl/started" ]; then started=$now; fi
    if [ -z "$booted" ] && [ -f "$ctl/booted" ]; then
      booted=$now
      read -r _ state <"$ctl/booted"
      echo "run.sh: booted ($acc) in $((now - t0)) s, system $state" >&2
    fi
    if [ -z "$started" ] && [ $((now - t0)) -ge "$bt" ]; then
      echo "run.sh: the VM ($acc) did not boot in $bt s" >&2
      kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null || true; qpid=""
      return 1
    fi
    # The command's bound counts from the end of the boot; until then the boot's bound
    # is added (systemd may still be starting units).
    limit=$((timeout * slow))
    [ -z "$booted" ] && limit=$((limit + bt))
    if [ -n "$started" ] && [ $((now - ${booted:-$started})) -ge "$limit" ]; then
      echo "run.sh: the command did not end in $((timeout * slow)) s" >&2
      kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null || true; qpid=""
      return 2
    fi
  done
  wait "$qpid" 2>/dev/null || true
  qpid=""
  drain
  [ -f "$ctl/status" ] || { echo "run.sh: the VM stopped without the command's status" >&2; return 3; }
  echo "run.sh: the command and the power-off took $(( $(date +%s) - ${booted:-$t0} )) s; VM up $(( $(date +%s) - t0 )) s in all" >&2
  return 0
}

rc=0
boot "$accel" || rc=$?
if [ $rc -eq 1 ] && [ "$accel" = kvm ] && [ -z "${BX_VM_ACCEL:-}" ]; then
  echo "run.sh: falling back to software emulation" >&2
  rc=0
  boot tcg || rc=$?
fi
[ -n "$journal" ] && [ -f "$ctl/journal" ] && cp "$ctl/journal" "$journal"
[ -n "$console" ] && [ -f "$tmp/console.log" ] && cp "$tmp/console.log" "$console"
if [ $rc -ne 0 ]; then
  echo "run.sh: the end of the serial console:" >&2
  tail -n 40 "$tmp/console.log" >&2 2>/dev/null || true
  cat "$tmp/qemu.log" >&2 2>/dev/null || true
  [ $rc -eq 2 ] && exit 124
  exit 125
fi
exit "$(cat "$ctl/status")"
