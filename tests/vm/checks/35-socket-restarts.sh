#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 600  (the most it may take under software emulation; see guest-checks.sh)
# brokerd.socket across restarts of brokerd.service (issue 24, item 4): with the socket unit
# active, brokerd.service is restarted, stopped and started again by the next connection,
# and reloaded; every time the socket in /run/boxmaker still answers, and every stop ends
# at once (a brokerd whose wake-up connects to a missing path would wait for its grace
# period, here ten minutes, and systemd would kill it at TimeoutStopSec: Result=timeout).
# Before the fix, the first restart left clients with "No such file or directory".
. "$(dirname "$0")/lib.sh"

sock=/run/boxmaker/broker.sock
conf=/etc/boxmaker/brokerd.yaml
cp "$conf" /tmp/bx-35-brokerd.yaml
# Ten minutes of grace: a stop that waits for it fails the check below.
printf '\ngrace_ms: 10m\n' >> "$conf"
systemctl stop brokerd.service >/dev/null 2>&1
cp /usr/share/doc/boxmaker/examples/brokerd.socket /etc/systemd/system/
systemctl daemon-reload
check "systemctl enable --now brokerd.socket" systemctl enable --now brokerd.socket

call() {
  local out rc
  out=$(/usr/bin/boxmaker call read_file '{"path":"/etc/hostname"}' --timeout-ms 120000 2>&1)
  rc=$?
  echo "exit $rc: $out"
  [ $rc -eq 1 ] # denied: the shipped config has no grant
}
stopped_cleanly() {
  local result
  result=$(systemctl show -P Result brokerd.service)
  echo "Result=$result"
  [ "$result" = success ] && ! systemctl is-active brokerd.service
}
check "the first call starts brokerd.service and is answered" call
check "systemctl restart brokerd.service" systemctl restart brokerd.service
check "after a restart, /run/boxmaker and the socket are still there" test -S "$sock"
check "after a restart, a call is answered" call
check "systemctl reload brokerd.service keeps it running" \
  sh -c 'systemctl reload brokerd.service && systemctl is-active brokerd.service'
check "after a reload, a call is answered" call
check "systemctl stop brokerd.service ends at once (no grace period, no timeout)" \
  sh -c 'systemctl stop brokerd.service; '"$(declare -f stopped_cleanly)"'; stopped_cleanly'
check "after a stop, the socket is still there, held by brokerd.socket" \
  sh -c "test -S $sock && systemctl is-active brokerd.socket"
check "after a stop, the next call starts brokerd.service again and is answered" call
check "no start found its socket gone or replaced" \
  sh -c '! journalctl -b -o cat -u brokerd.service | grep -E "is gone|is not the socket systemd passed"'
check "the second stop ends at once too" \
  sh -c 'systemctl stop brokerd.service; '"$(declare -f stopped_cleanly)"'; stopped_cleanly'
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'

# Back to the packages as installed, for the next checks.
systemctl disable --now brokerd.socket >/dev/null 2>&1
rm -f /etc/systemd/system/brokerd.socket
cp /tmp/bx-35-brokerd.yaml "$conf"
systemctl daemon-reload
systemctl restart brokerd.service >/dev/null 2>&1
finish
