#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 600  (the most it may take under software emulation; see guest-checks.sh)
# brokerd.service as installed, with the shipped config (the refusing runtime), runs under
# systemd: it starts, its socket exists with the promised owner and mode, the installed CLI
# reaches it (a call without a grant is denied: exit 1, not 3 "unavailable").
. "$(dirname "$0")/lib.sh"

sock=/run/boxmaker/broker.sock
check "systemctl restart brokerd.service" systemctl restart brokerd.service
check "brokerd.service is active" sh -c 'systemctl is-active brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
check "boxmaker --version" sh -c '/usr/bin/boxmaker --version | grep -q "^boxmaker "'
check "$sock exists, a socket of boxmaker:boxmaker, mode 0660" \
  sh -c "[ -S $sock ] && [ \"\$(stat -c '%U:%G %a' $sock)\" = 'boxmaker:boxmaker 660' ] || { ls -l $sock; exit 1; }"
call() {
  local out rc
  out=$(/usr/bin/boxmaker call read_file '{"path":"/etc/hostname"}' --timeout-ms 60000 2>&1)
  rc=$?
  echo "exit $rc: $out"
  [ $rc -eq 1 ]
}
check "boxmaker call reaches brokerd: denied without a grant (exit 1)" call
check "brokerd runs as boxmaker" \
  sh -c 'u=$(ps -o user= -p "$(systemctl show -P MainPID brokerd.service)"); echo "$u"; [ "$u" = boxmaker ]'
check "systemctl reload brokerd.service keeps it running" \
  sh -c 'systemctl reload brokerd.service && sleep 1 && systemctl is-active brokerd.service'
check "systemctl stop brokerd.service: stops, the socket is gone" \
  sh -c "systemctl stop brokerd.service && ! systemctl is-active brokerd.service && [ ! -e $sock ]"
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'
finish
