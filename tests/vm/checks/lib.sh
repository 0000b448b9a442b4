# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the VM lane's checks (tests/vm/checks/NN-name.sh), which run in order inside the
# VM as root, with systemd as PID 1, once the boot is over.  Each check prints one PASS,
# FAIL or SKIP line (a SKIP says why) and, for a FAIL, what it saw; a check file exits 1
# when any of its checks failed.
# The environment: BX_TREE is the source tree (shared from the host at the same path),
# BX_DEBS the folder holding the packages the lane built.

FAILURES=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
skip() { echo "SKIP: $*"; }
# check NAME COMMAND...: PASS when COMMAND succeeds; otherwise FAIL with the end of its output.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    pass "$name"
    [ -z "${BX_VERBOSE:-}" ] || printf '%s\n' "$out" | sed 's/^/    /' | tail -n 30
  else
    fail "$name"
    printf '%s\n' "$out" | sed 's/^/    /' | tail -n 30
  fi
}
finish() { [ "$FAILURES" -eq 0 ]; exit $?; }

# wait_for SECONDS COMMAND...: runs COMMAND every half second until it succeeds; fails when
# SECONDS (times BX_VM_SLOWDOWN) pass first.  The VM is emulated and slow: bounds are wide.
wait_for() {
  local n=$(( $1 * ${BX_VM_SLOWDOWN:-1} * 2 ))
  shift
  while [ "$n" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
    n=$((n - 1))
  done
  "$@"
}

# unit_log UNIT: the unit's journal of this boot, for a FAIL's explanation.
unit_log() { journalctl -b --no-pager -o cat -u "$1" | tail -n 30; }
