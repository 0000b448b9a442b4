#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, on a fresh Debian 12 machine as root:
#   1. install what the build and the tests need, and check that every C file is formatted
#      as .clang-format says (first: it takes seconds);
#   2. build with gcc and run every test;
#   3. run the clang static analyzer (scan-build) over a gcc build: any finding fails;
#   4. build again with clang, AddressSanitizer, UBSan and libFuzzer, and run every test
#      again (the fuzz harnesses get a short smoke run each);
#   5. build the Debian packages, install them, check them as a user would, remove them;
#   6. the VM lane (tests/vm/lane.sh): the packages installed and run in a Debian 12 VM with
#      systemd as PID 1 on cgroup v2 (BX_VM_LANE=0 leaves it out).  Its image is built in the
#      background from step 2 on (debootstrap waits mostly on the archive and the disk), so
#      that the whole run fits in CI's time on 2 cores; the lane prints its own time.  CI
#      stops a run at 90 minutes, so the lane works to a deadline, BX_RUN_BUDGET_S (default
#      4800) after this script started: a check that may not end before it is not started
#      and the lane says which (tests/vm/guest-checks.sh); an image not built by then
#      leaves the lane out, saying so.  A check that ran and failed fails the run.
# Every step prints the time since the start.  Any failure stops the run with a non-zero
# status.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=$(nproc)

start=$(date +%s)
deadline=$(( start + ${BX_RUN_BUDGET_S:-4800} ))
step() { printf '\n==== %s (at %d s)\n' "$*" "$(( $(date +%s) - start ))"; }

step "dependencies"
tests/install-deps.sh

# Real podman and real bubblewrap must run in this suite: a podman or bwrap test that
# cannot run fails instead of skipping.
export BX_REQUIRE_PODMAN=1
export BX_REQUIRE_BWRAP=1
# The MCP tests need Node.js and the SDK from npm (install-deps.sh installs Node).
export BX_REQUIRE_MCP_SDK=1

step "formatting (clang-format --dry-run -Werror)"
find base broker client host plugins-api proto runtimes toolkit tests bench docs/examples \
  -name '*.[ch]' -print0 | sort -z | xargs -0 clang-format --dry-run -Werror

image_pid=""
if [ "${BX_VM_LANE:-1}" != 0 ]; then
  step "VM image: built in the background, log in build/vm-image.log"
  mkdir -p build
  setsid -w tests/vm/build-image.sh --out build/vm > build/vm-image.log 2>&1 &
  image_pid=$!
  # A failing step must not leave debootstrap running behind it (its own process group).
  trap '[ -z "$image_pid" ] || kill -- -"$image_pid" 2>/dev/null || true' EXIT
fi

step "gcc build"
cmake -S . -B build/gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build/gcc -j "$jobs"
step "gcc tests"
ctest --test-dir build/gcc --output-on-failure -j "$jobs"

step "static analysis (scan-build on the gcc build)"
rm -rf build/scan build/scan-report
scan-build -o build/scan-report cmake -S . -B build/scan -DCMAKE_BUILD_TYPE=Debug
scan-build -o build/scan-report --status-bugs cmake --build build/scan -j "$jobs"

step "sanitizer build (clang, ASan, UBSan, libFuzzer)"
cmake -S . -B build/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DBX_SANITIZE=ON -DBX_FUZZ=ON
cmake --build build/asan -j "$jobs"
step "sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

step "Debian packages"
rm -rf build/debs
packaging/test-packages.sh --copy-to build/debs

if [ "${BX_VM_LANE:-1}" != 0 ]; then
  step "VM image (waiting for the background build)"
  # The lane needs about ten minutes after its image to boot and install the packages.
  while kill -0 "$image_pid" 2>/dev/null && [ $(( $(date +%s) + 600 )) -lt $deadline ]; do
    sleep 5
  done
  if kill -0 "$image_pid" 2>/dev/null; then
    kill -- -"$image_pid" 2>/dev/null || true
    image_pid=""
    cat build/vm-image.log
    echo "VM lane NOT RUN: its image was not built $(( $(date +%s) - start )) s into the run," \
      "and the run's time (BX_RUN_BUDGET_S) ends at $(( deadline - start )) s"
  else
    rc=0
    wait "$image_pid" || rc=$?
    image_pid=""
    cat build/vm-image.log
    [ $rc = 0 ] || { echo "the VM image could not be built (status $rc)"; exit 1; }
    step "VM lane (Debian 12, systemd, cgroup v2)"
    # Checks 70 and up (the host's build of bwrap.so's and podman.so's real tests inside the
    # guest) build a read-only root or an image of their own and take 10 to 40 minutes under
    # software emulation, more than CI's 90 minutes leave after the rest: they run when
    # BX_VM_CHECKS names them (with BX_VM_BWRAP_TESTS and BX_VM_PODMAN_TESTS for more
    # cases).
    BX_VM_CHECKS=${BX_VM_CHECKS:-^[0-6][0-9]-} BX_VM_DEADLINE=$deadline \
      tests/vm/lane.sh --debs build/debs
  fi
fi

step "all tests passed"
cd "$top"
