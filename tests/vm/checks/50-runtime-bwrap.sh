#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 900  (the most it may take under software emulation; see guest-checks.sh)
# The installed service with bwrap.so on cgroup v2, set up as boxmaker-runtime-bwrap's
# README.Debian says (its drop-in brokerd-bwrap.conf: root, Delegate=yes, its capabilities
# and filters): calls through the installed boxmaker run in sandboxes as nobody, in cgroups
# of brokerd's own delegated subtree (brokerd itself in a leaf of it), with the memory
# limit holding (the fixed sentence).
# Needs bwrap.so's cgroup v2 backend; without it brokerd refuses to start, and this fails.
. "$(dirname "$0")/lib.sh"

conf=/etc/boxmaker/brokerd.yaml
grant=/srv/bx-vm-bwrap
cp "$conf" /tmp/bx-50-brokerd.yaml
mkdir -p "$grant" /etc/systemd/system/brokerd.service.d
echo "hello from the host" > "$grant/notes.txt"
chown 65534:65534 "$grant"
cat > "$conf" <<EOC
socket: /run/boxmaker/broker.sock
home: /var/lib/boxmaker
runtime:
  module: bwrap
  options:
    memory: 32m
grants:
  - tools: [read_file, write_file, shell]
    paths: [$grant]
audit: stderr
EOC
check "install the drop-in as README.Debian says" \
  sh -c 'cp /usr/share/doc/boxmaker-runtime-bwrap/examples/brokerd-bwrap.conf \
           /etc/systemd/system/brokerd.service.d/bwrap.conf && systemctl daemon-reload'
check "systemctl restart brokerd.service with bwrap.so" \
  sh -c 'systemctl restart brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
bx() { /usr/bin/boxmaker call --timeout-ms 120000 "$@" 2>&1; }
check "read_file runs" sh -c "$(declare -f bx); bx read_file '{\"path\":\"$grant/notes.txt\"}' | grep -q 'hello from the host'"
check "shell runs as nobody, never root nor boxmaker" \
  sh -c "$(declare -f bx); bx shell '{\"command\":\"id -u; touch made\",\"cwd\":\"$grant\"}' | grep -qx 65534 && [ \"\$(stat -c %U $grant/made)\" = nobody ]"
check "brokerd.service's cgroup is delegated: brokerd is in a leaf of its own below it" \
  sh -c "pid=\$(systemctl show -P MainPID brokerd.service); cg=\$(cut -d: -f3 /proc/\$pid/cgroup); echo \"\$cg\"; case \$cg in /system.slice/brokerd.service/?*) ;; *) exit 1 ;; esac"
# 60 MB held in a shell variable, over a 32m limit (as tests/bwrap/real-brokerd.sh does).
cat > /tmp/bx-50-hog.json <<'EOJ'
{"command":"dd if=/dev/zero of=/dev/null bs=120M count=1"}
EOJ
check "the memory limit holds: the fixed sentence" \
  sh -c "$(declare -f bx); bx shell @/tmp/bx-50-hog.json | grep -q 'the tool was stopped: it ran out of memory or was killed'"
# Sandboxes made ahead (the option pool): the drop-in's capabilities let brokerd enter
# them; a call that could not would run in a sandbox of its own, and the log would say so.
sed -i 's/^    memory: 32m$/    memory: 32m\n    pool: 2/' "$conf"
check "systemctl restart brokerd.service with pool: 2" \
  sh -c 'systemctl restart brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
waiting() { pgrep -f '^/bin/toolkit wait$' | wc -l; }
check "two sandboxes wait in brokerd's slots" \
  sh -c "$(declare -f waiting); for i in \$(seq 300); do [ \$(waiting) -ge 2 ] && exit 0; sleep 0.2; done; pgrep -af toolkit; exit 1"
# Each prints what it got, so that a failure shows it (boxmaker's stderr line may come
# before or after the tool's output).
check "read_file runs in a sandbox made ahead" \
  sh -c "$(declare -f bx); out=\$(bx read_file '{\"path\":\"$grant/notes.txt\"}'); echo \"\$out\"; echo \"\$out\" | grep -q 'hello from the host'"
check "shell runs in a sandbox made ahead, as nobody, its root read-only" \
  sh -c "$(declare -f bx); out=\$(bx shell '{\"command\":\"id -u; touch /x 2>&1\",\"cwd\":\"$grant\"}'); echo \"\$out\"; echo \"\$out\" | grep -qx 65534 && echo \"\$out\" | grep -q 'touch: /x: Read-only file system'"
check "no call had to make a sandbox of its own" \
  sh -c "! journalctl -u brokerd.service --since '-5min' --no-pager | grep 'cannot mount the call'"
check "the memory limit holds in a sandbox made ahead" \
  sh -c "$(declare -f bx); bx shell @/tmp/bx-50-hog.json | grep -q 'the tool was stopped: it ran out of memory or was killed'"
check "systemctl stop brokerd.service ends cleanly" \
  sh -c 'systemctl stop brokerd.service && [ "$(systemctl show -P Result brokerd.service)" = success ]'
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'

# Back to the packages as installed.
rm -f /etc/systemd/system/brokerd.service.d/bwrap.conf
cp /tmp/bx-50-brokerd.yaml "$conf"
rm -rf "$grant" /tmp/bx-50-hog.json
systemctl daemon-reload
systemctl restart brokerd.service >/dev/null 2>&1
finish
