#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One filter, both runtimes: every row of the seccomp table (runtimes/common/seccomp_table.c)
# is tried inside the sandbox, each value it refuses must get exactly the row's errno and
# each value it allows the kernel's own answer.  Run against podman.so and bwrap.so, this
# compares the two filters call by call, io_uring, setuid modes and address families
# included.
. "$(dirname "$0")/lib.sh"
not_for gvisor "its refusals hold in gVisor's kernel, but runsc 20221219's OCI seccomp filter answers EPERM whatever errnoRet says, and this case checks each errno of the table (tests/gvisor/conformance.sh checks the setuid refusals)"

writable_folder "$work/w"
build_seccomp_probe "$work/w/seccomp_probe"
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"
call b shell "{\"command\":\"./seccomp_probe table\",\"cwd\":\"$work/w\"}"
echo "inside:"
printf '%s\n' "$out"
case $out in
  *failures=0*) pass "every row of the table refused as written, the rest allowed" ;;
  *failures=*) fail "$(printf '%s\n' "$out" | grep -c '^FAIL') attempts not as the table says" ;;
  *) fail "no answer from the probe (rc=$rc err=$err)" ;;
esac
for call in io_uring_setup io_uring_enter io_uring_register; do
  line=$(printf '%s\n' "$out" | grep "^$call(" | head -n 1)
  case $line in
    *=ENOSYS) pass "$call refused: $line" ;;
    *) fail "$call not refused: ${line:-no answer}" ;;
  esac
done
finish
