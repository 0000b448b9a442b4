#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/lane.sh [--image-dir DIR] [--debs DIR] [--build DIR]: the VM lane, as root on a
# Debian 12 host.
#
# What only a real systemd as PID 1 on cgroup v2 can show, checked in a Debian 12 VM:
#   1. build the Debian packages on the host (packaging/build-packages.sh), unless --debs
#      names a folder that already holds them;
#   2. build the VM image (tests/vm/build-image.sh; kept in DIR, default build/vm, and built
#      again only when its script or package list changed);
#   3. boot it (tests/vm/run.sh) with this tree shared at the same path, and run there
#      tests/vm/guest-checks.sh: every tests/vm/checks/NN-name.sh in order, the first of which
#      install the packages with apt (offline: the image holds every dependency), and the
#      last of which (70-tree-bwrap, 75-tree-podman) run tests of the tree's build in DIR
#      (--build, default build/gcc, built here when it is not there yet).
# What runs in the guest is what systemd as PID 1 or cgroup v2 can change, because the
# guest is emulated (tens of times slower than the host without KVM) and the lane must stay
# within about 35 minutes on two cores, its image build included:
#   - the installed service under systemd: install, start, socket activation and restarts,
#     the journal's fields, each runtime's packaged drop-in (checks 10 to 65);
#   - bwrap.so, whose slots are cgroup v2 folders of a delegated subtree there (v1
#     hierarchies on the host): bwrap_systemd_v2 and containment_bwrap_limits (check 70);
#   - podman.so as root, which hands the limits to systemd there: containment_limits
#     (check 75), beside checks 60 and 65 (the packaged drop-ins, the out-of-memory sentence).
# Each test of the tree builds a root or an image of its own, minutes under emulation:
# bwrap_real_brokerd, both conformance kits and the other containment cases run there only
# when BX_VM_BWRAP_TESTS and BX_VM_PODMAN_TESTS name them (a run with time, or KVM).
# Everything else (argument lists, the broker, the client, the other containment cases)
# behaves the same on either hierarchy and runs on the host only (tests/run-all.sh).
# Prints each step's time and the lane's.  The guest's journal and serial console land in
# build/vm-lane/.  BX_VM_CHECKS (a regular expression) runs only the matching checks; the
# environment of run.sh (BX_VM_ACCEL, BX_VM_SLOWDOWN) applies.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
imgdir=${BX_VM_IMAGE_DIR:-$top/build/vm}
debs=""
build=$top/build/gcc
while [ $# -gt 0 ]; do
  case "$1" in
    --image-dir) imgdir=$2; shift 2 ;;
    --debs) debs=$2; shift 2 ;;
    --build) build=$(realpath -m "$2"); shift 2 ;;
    *) echo "usage: $0 [--image-dir DIR] [--debs DIR] [--build DIR]" >&2; exit 2 ;;
  esac
done
work=$top/build/vm-lane
mkdir -p "$work"
t0=$(date +%s)
timed() {
  local name=$1 s rc=0
  shift
  s=$(date +%s)
  "$@" || rc=$?
  echo "vm lane: $name took $(( $(date +%s) - s )) s" >&2
  return $rc
}

if [ -z "$debs" ]; then
  rm -rf "$work/debs"
  timed "the package build" packaging/build-packages.sh "$work/debs" >/dev/null
  debs=$work/debs
else
  # The VM sees this tree only: the packages are copied into it.
  [ "$(realpath "$debs")" = "$work/debs" ] || {
    rm -rf "$work/debs"; mkdir -p "$work/debs"; cp "$debs"/*.deb "$work/debs/"
  }
  debs=$work/debs
fi
case $build in
  "$top"/*) ;;
  *) echo "vm lane: --build $build is not inside $top, which is all the VM sees" >&2; exit 2 ;;
esac
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  timed "the tree's build" sh -c "cmake -S . -B '$build' -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build '$build' -j$(nproc) >/dev/null"
fi
timed "the image (built or up to date)" tests/vm/build-image.sh --out "$imgdir"

rc=0
env_args=(--env "BX_TREE=$top" --env "BX_DEBS=$debs" --env "BX_VM_BUILD=$build")
[ -n "${BX_VM_CHECKS:-}" ] && env_args+=(--env "BX_VM_CHECKS=$BX_VM_CHECKS")
[ -n "${BX_VM_SLOWDOWN:-}" ] && env_args+=(--env "BX_VM_SLOWDOWN=$BX_VM_SLOWDOWN")
[ -n "${BX_VERBOSE:-}" ] && env_args+=(--env "BX_VERBOSE=$BX_VERBOSE")
# BX_VM_DEADLINE (Unix seconds): the checks that would end past it are not started, and the
# VM's command is bounded by it.
run_bound=()
if [ -n "${BX_VM_DEADLINE:-}" ]; then
  env_args+=(--env "BX_VM_DEADLINE=$BX_VM_DEADLINE")
  left=$(( BX_VM_DEADLINE - $(date +%s) ))
  [ $left -gt 300 ] || left=300
  run_bound=(--timeout "$left")
fi
for v in BX_VM_BWRAP_TESTS BX_VM_PODMAN_TESTS BX_VM_TEST_SLOWDOWN BX_SLOW; do
  [ -n "${!v:-}" ] && env_args+=(--env "$v=${!v}")
done
timed "the VM run (boot and checks)" tests/vm/run.sh --image "$imgdir" --share "$top" \
  "${run_bound[@]}" "${env_args[@]}" --journal "$work/journal.txt" --console "$work/console.txt" \
  -- bash "$top/tests/vm/guest-checks.sh" || rc=$?
echo "vm lane: $(( $(date +%s) - t0 )) s in all; exit $rc (the guest's journal: $work/journal.txt)"
exit $rc
