#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 2400  (the most it may take under software emulation; see guest-checks.sh)
# bwrap.so's tests of the host's build (tests/vm/tree-tests.py runs them, with bounds for
# software emulation) on what users' hosts have and this project's CI host has not: systemd
# as PID 1 on cgroup v2, where bwrap.so's slots are cgroup v2 folders of a delegated subtree.
# Only the cases cgroup v2 or systemd can change run here; the rest of the suite runs on the
# host (lane.sh's comment says which and why):
#   bwrap_systemd_v2      a delegated unit of its own: brokerd's leaf, the slots' files,
#                         reload, restart, nothing left after stop (skips off systemd + v2)
#   containment_bwrap_limits  memory, pids, CPU and file size limits as the slot's cgroup v2
#                         files hold them, and the fixed out-of-memory sentence
# and, when BX_VM_BWRAP_TESTS names them (they do not fit the lane's time by default):
#   bwrap_real_brokerd    every tool and limit through brokerd with real bubblewrap, the
#                         sweep of a killed brokerd's cgroups
#   bwrap_conformance     the conformance kit against bwrap.so
#   containment_bwrap_*   the other containment cases (users, processes, mounts)
# BX_VM_BUILD names the build folder (default build/gcc of the tree); it must be built.
. "$(dirname "$0")/lib.sh"

build=${BX_VM_BUILD:-$BX_TREE/build/gcc}
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  fail "no build of the tree in $build (lane.sh builds it)"
  finish
fi
export BX_REQUIRE_BWRAP=1
# The conformance kit's room for a slow machine (boxmaker-runtime-check --slow).
export BX_SLOW=${BX_SLOW:-40}
# The cases' read-only root stays in the guest: over the 9p share every exec would cross it.
rootfs_dir=$build/tests/containment/bwrap
mkdir -p "$rootfs_dir" && mount -t tmpfs -o mode=0755 tmpfs "$rootfs_dir"

# What fits the lane's time under emulation by default (each of these tests builds a
# read-only root of its own, about four minutes in the guest under load): BX_VM_BWRAP_TESTS
# (names, space-separated) runs others, such as bwrap_real_brokerd and bwrap_conformance,
# or more containment_bwrap_* cases, where there is time (KVM).
read -rd "" -a tests <<<"${BX_VM_BWRAP_TESTS:-bwrap_systemd_v2 containment_bwrap_limits}" || true
# The tests make cgroups of their own below the root, whose subtree_control must then hand
# out memory, pids and cpu: systemd enables them there for as long as a unit with
# Delegate=yes lives, as the packaged drop-in's brokerd.service is on a user's host.  The
# tests run in such a unit (a scope).
systemd-run --quiet --scope --unit="bx-vm-tree-bwrap-$$" -p Delegate=yes -- \
  python3 "$BX_TREE/tests/vm/tree-tests.py" "$build" "${tests[@]}" || FAILURES=$((FAILURES + 1))
umount "$rootfs_dir" 2>/dev/null
finish
