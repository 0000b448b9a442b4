#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 600  (the most it may take under software emulation; see guest-checks.sh)
# brokerd.socket (shipped as an example): systemd listens, and the first connection starts
# brokerd.service, which takes the socket it is passed and answers that very call.
. "$(dirname "$0")/lib.sh"

sock=/run/boxmaker/broker.sock
# As brokerd.socket's own comment says: copy it to /etc/systemd/system/ and enable it.
unit=/usr/share/doc/boxmaker/examples/brokerd.socket
systemctl stop brokerd.service >/dev/null 2>&1
check "install and enable brokerd.socket as its comment says" \
  sh -c "cp $unit /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now brokerd.socket"
check "brokerd.service is not running before the first connection" \
  sh -c '! systemctl is-active brokerd.service'
check "$sock exists, a socket of boxmaker:boxmaker, mode 0660" \
  sh -c "[ -S $sock ] && [ \"\$(stat -c '%U:%G %a' $sock)\" = 'boxmaker:boxmaker 660' ] || { ls -l $sock; exit 1; }"
call() {
  local out rc
  out=$(/usr/bin/boxmaker call read_file '{"path":"/etc/hostname"}' --timeout-ms 120000 2>&1)
  rc=$?
  echo "exit $rc: $out"
  [ $rc -eq 1 ]
}
check "the first call starts brokerd.service and is answered (denied, exit 1)" call
check "brokerd.service is active, started by the socket" \
  sh -c 'systemctl is-active brokerd.service && journalctl -b -o cat -u brokerd.service | grep -q "passed by systemd"'
# Back to the packages as installed, for the next checks.
systemctl stop brokerd.service >/dev/null 2>&1
systemctl disable --now brokerd.socket >/dev/null 2>&1
rm -f /etc/systemd/system/brokerd.socket
systemctl daemon-reload
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'
finish
