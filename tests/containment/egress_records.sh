#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The audit trail: a shell grant with hosts: shares the call's egress folder with the
# egress proxy, whose records of every connection reach the call's audit line.  A hostile
# shell that could write that folder would forge records (a connection that never was, a
# refusal turned into an allowed one) or erase them.  The tool's sandbox must see the
# folder read-only: only the proxy writes there.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/proj"
start_brokerd s "audit: $work/audit.log" "" "  - tools: [shell]
    paths: [$work/proj]
    hosts: [granted.bxtest.example]"

# The forged record, in the granted folder for the shell to copy.
printf '%s\n' '{"host":"forged.bxtest.example","port":443,"reply":0,"address":"93.184.216.34"}' \
  > "$work/proj/forged"
call s shell "{\"command\":\"cat forged >> /run/egress/egress-records; echo append=\$?; rm -f /run/egress/egress-records; echo rm=\$?; cat forged > /run/egress/egress-records; echo create=\$?; touch /run/egress/planted; echo touch=\$?\",\"cwd\":\"$work/proj\"}"
contains "$out" "append=" || fail "the shell did not run: rc=$rc out=$out err=$err"
contains "$out" "append=0" && fail "the shell appended to the egress records: $out"
contains "$out" "rm=0" && fail "the shell removed the egress records: $out"
contains "$out" "create=0" && fail "the shell wrote its own egress records: $out"
contains "$out" "touch=0" && fail "the shell planted a file in the egress folder: $out"
line=$(grep "\"c$n\"" "$work/audit.log" || true)
[ -n "$line" ] || fail "no audit line for the call: $(cat "$work/audit.log")"
contains "$line" forged.bxtest.example && fail "a forged egress record reached the audit line: $line"
[ $failures -eq 0 ] && pass "the shell sees its egress folder read-only; the audit line holds only the proxy's records"

# The egress socket still works from a read-only folder: a refused host is recorded by the
# proxy, not by the shell.
call s shell "{\"command\":\"curl -sS --max-time 10 https://refused.bxtest.example/ 2>&1; echo fetched=\$?\",\"cwd\":\"$work/proj\"}"
contains "$out" "fetched=" || fail "the second shell did not run: rc=$rc out=$out err=$err"
line=$(grep "\"c$n\"" "$work/audit.log" || true)
contains "$line" refused.bxtest.example && pass "the proxy's refusal is on the audit line" \
  || fail "the proxy's refusal is not on the audit line: $line (out=$out)"
finish
