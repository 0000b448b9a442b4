#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The conformance kit against naive.so built with one fault (naive_module.c):
#
#   crash     run() dereferences NULL on write_file: that check fails, named, with the
#             signal, and every later check still runs and reports
#   garbage   failure sentences made per call with control bytes: caught as not fixed, and
#             no control byte reaches the kit's output
#   declines  BX_RUN_UNAVAILABLE for limits and egress it cannot enforce, as the header
#             allows: those checks are skipped with the reason, not failed (the checks
#             naive.so breaks still fail)
#   declared  BX_RUNTIME_NOT_A_SANDBOX: every contract check skipped with that reason, exit
#             status 3, and a summary that does not read as a pass
#
#   kit_bad_modules.sh FAULT CHECK MODULE_SO TOOLKIT
set -u
fault=$1 check=$2 module=$3 toolkit=$4
out=$("$check" "$module" --option "toolkit=$toolkit" 2>&1)
rc=$?
echo "$out"
fail () {
  echo "FAIL: $*"
  exit 1
}
has () {
  echo "$out" | grep -q "$1" || fail "no line matching \"$1\""
}
lacks () {
  echo "$out" | grep -q "$1" && fail "a line matches \"$1\""
  return 0
}
summary='^conformance: [0-9]* passed, [0-9]* failed$'
[ "$fault" = declared ] && summary='^conformance: not a sandbox: .*; no check of the contract ran$'
echo "$out" | tail -n 1 | grep -q "$summary" || fail "the summary is not the last line"
case $fault in
  crash)
    [ "$rc" = 1 ] || fail "exit $rc, expected 1 (a check failed)"
    # SIGSEGV; in a sanitizer build its runtime catches the signal and ends the process
    # itself (SIGABRT, or exit status 1).
    has '^FAIL: write_file writes through a writable mount: \(the module crashed: signal \(11\|6\) \|the check.s process ended without its report (exit status 1)\)'
    # The checks after the crash ran in a kit that is still alive.
    has '^pass: the time limit ends a call with its fixed sentence'
    has '^pass: calls from many threads at once'
    has '^[a-zA-Z]*: nothing is left behind'
    ;;
  garbage)
    [ "$rc" = 1 ] || fail "exit $rc, expected 1 (a check failed)"
    # No escape, bell or carriage return: only text and newlines reach the terminal.
    if printf '%s' "$out" | LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')"; then
      fail "a control byte reached the kit's output"
    fi
    has '^FAIL: failure sentences are fixed strings: '
    has 'not a fixed string'
    ;;
  declines)
    # The CPU check may be skipped first for a machine too busy to tell.
    lacks "^FAIL: the CPU limit caps the CPU time"
    for name in "the memory limit stops a call" "the pids limit caps the processes" \
                "the file size limit caps a file" \
                "egress reaches only the granted hosts" \
                "the egress folder is read-only to the tool"; do
      has "^skip: $name: unavailable (\"the naive runtime "
      lacks "^FAIL: $name"
    done
    ;;
  declared)
    [ "$rc" = 3 ] || fail "exit $rc, expected 3 (not a sandbox)"
    has '^skip: read_file runs toolkit over a read-only mount: not a sandbox: the module declares itself none'
    lacks '^pass: .*mount\|^pass: .*limit\|^FAIL: '
    ;;
  *)
    fail "unknown fault $fault"
    ;;
esac
echo "ok: the kit handles naive.so with the fault $fault"
