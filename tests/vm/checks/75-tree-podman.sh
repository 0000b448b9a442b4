#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 1800  (the most it may take under software emulation; see guest-checks.sh)
# podman.so's tests of the host's build (tests/vm/tree-tests.py runs them, with bounds for
# software emulation) with rootful podman on systemd's cgroup v2, where podman hands the
# limits to systemd and a container's cgroup is its own (the CI host has cgroup v1):
#   containment_limits  the limits as the container's own cgroup v2 files hold them, and
#                       held (podman_real_setup builds its image)
# and, when BX_VM_PODMAN_TESTS names them (they do not fit the lane's time by default):
#   test_podman_passes_the_conformance_kit, containment_shared_uid_limits and the others
# Rootless podman on cgroup v2 is 60-runtime-podman-rootless's, as README.Debian sets it up.
# BX_VM_BUILD names the build folder (default build/gcc of the tree); it must be built.
. "$(dirname "$0")/lib.sh"

build=${BX_VM_BUILD:-$BX_TREE/build/gcc}
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  fail "no build of the tree in $build (lane.sh builds it)"
  finish
fi
export BX_REQUIRE_PODMAN=1
export BX_SLOW=${BX_SLOW:-40}
# What fits the lane's time under emulation by default; BX_VM_PODMAN_TESTS (names,
# space-separated) runs others, such as test_podman_passes_the_conformance_kit or more
# containment cases, where there is time (KVM).
read -rd "" -a tests <<<"${BX_VM_PODMAN_TESTS:-containment_limits}" || true
python3 "$BX_TREE/tests/vm/tree-tests.py" "$build" "${tests[@]}" || FAILURES=$((FAILURES + 1))
finish
