#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The audit trail of a shell with network: the egress proxy records each connection, at
# most BX_EGRESS_RECORDS_MAX (256) per call.  A hostile shell first makes 64 refused
# connections (the old cap), then reaches a granted host: that connection must not be
# missing from the call's audit line (the proxy either records it or does not serve it;
# past the cap it does not serve it: test_egress, test_no_connection_past_the_last_record).
. "$(dirname "$0")/lib.sh"

writable_folder "$work/proj"
start_brokerd s "audit: $work/audit.log" "" "  - tools: [shell]
    paths: [$work/proj]
    hosts: [granted.bxtest.example]"

call s shell "{\"command\":\"i=0; while [ \$i -lt 64 ]; do curl -sS --max-time 5 https://refused.bxtest.example/ > /dev/null 2>&1; i=\$((i + 1)); done; curl -sS -v --max-time 10 https://granted.bxtest.example/ 2>&1 | grep HTTP/; echo fetched=\$?\",\"cwd\":\"$work/proj\"}"
contains "$out" "fetched=" || fail "the shell did not run: rc=$rc out=$out err=$err"
line=$(grep "\"c$n\"" "$work/audit.log" | tail -1)
records=$(printf '%s\n' "$line" | grep -o '"host":"refused.bxtest.example"' | wc -l)
[ "$records" -ge 1 ] || fail "the refused connections are not on the audit line: $line"
# "could not resolve": the proxy took the 65th connection on to the granted host's
# resolution.
if contains "$out" "could not resolve"; then
  contains "$line" "\"host\":\"granted.bxtest.example\"" \
    && pass "the connection after $records refused ones is on the audit line" \
    || fail "the proxy served a connection to the granted host after $records refused ones and the audit line does not show it (out=$out)"
else
  pass "the proxy did not serve the connection after $records refused ones: $out"
fi
finish
