#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 300  (the most it may take under software emulation; see guest-checks.sh)
# brokerd's log lines in the journal under the installed service, read back with
# journalctl -o json (docs/config.md, "systemd"; docs/runbook.md, "logs"): the start line at
# priority info with no BOXMAKER_* field; a call's lines with BOXMAKER_CALL, _SESSION,
# _TOOL and _GRANT.  A call's lines are made by an audit log that cannot be written (a full
# file system): brokerd then refuses the call at priority crit, with the call's fields.
. "$(dirname "$0")/lib.sh"

conf=/etc/boxmaker/brokerd.yaml
full=/var/log/boxmaker/full
grant=/srv/bx-vm-journal
cp "$conf" /tmp/bx-45-brokerd.yaml
systemctl stop brokerd.service >/dev/null 2>&1
mkdir -p "$full" "$grant"
echo hello > "$grant/notes.txt"
mount -t tmpfs -o size=64k,mode=0750 tmpfs "$full"
chown boxmaker:boxmaker "$full"
touch "$full/audit.log" && chown boxmaker:boxmaker "$full/audit.log"
dd if=/dev/zero of="$full/filler" bs=4k count=64 2>/dev/null # fills it: ENOSPC from now on
cat > "$conf" <<EOC
socket: /run/boxmaker/broker.sock
home: /var/lib/boxmaker
runtime:
  module: refusing
grants:
  - tools: [read_file]
    paths: [$grant]
audit: $full/audit.log
EOC
since=$(date '+%Y-%m-%d %H:%M:%S')
check "brokerd.service starts with the audit log on a full file system" \
  systemctl restart brokerd.service
/usr/bin/boxmaker call read_file "{\"path\":\"$grant/notes.txt\"}" --call vmj1 --session vm-sess \
  --timeout-ms 120000 >/dev/null 2>&1
entries() { journalctl -o json --no-pager --since "$since" SYSLOG_IDENTIFIER=brokerd "$@"; }
field() { python3 -c 'import json,sys
for line in sys.stdin:
    e = json.loads(line)
    print(" ".join(k + "=" + str(e.get(k, "-")) for k in sys.argv[1:]))' "$@"; }
listening() {
  local out
  out=$(entries | grep '"MESSAGE":"listening on ' | field PRIORITY BOXMAKER_CALL _TRANSPORT)
  echo "$out"
  [ "$out" = "PRIORITY=6 BOXMAKER_CALL=- _TRANSPORT=journal" ]
}
check "the start line: priority info, no call fields, sent to the journal" wait_for 30 listening
call_lines() {
  local out
  out=$(entries BOXMAKER_CALL=vmj1 | field PRIORITY BOXMAKER_SESSION BOXMAKER_TOOL BOXMAKER_GRANT MESSAGE)
  echo "$out"
  printf '%s\n' "$out" | grep -q "^PRIORITY=2 BOXMAKER_SESSION=vm-sess BOXMAKER_TOOL=read_file BOXMAKER_GRANT=1 MESSAGE=call vmj1: cannot write the audit log, not running it: No space left on device$"
}
check "the call's line: priority crit, BOXMAKER_CALL, _SESSION, _TOOL, _GRANT" wait_for 30 call_lines
check "journalctl -u brokerd BOXMAKER_CALL=vmj1 finds it, as the runbook says" \
  sh -c 'journalctl -u brokerd --no-pager -o cat BOXMAKER_CALL=vmj1 | grep -q "call vmj1: "'
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'

# Back to the packages as installed.
systemctl stop brokerd.service >/dev/null 2>&1
umount "$full"
rm -rf "$full" "$grant"
cp /tmp/bx-45-brokerd.yaml "$conf"
systemctl restart brokerd.service >/dev/null 2>&1
finish
