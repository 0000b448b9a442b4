#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 120  (the most it may take under software emulation; see guest-checks.sh)
# The VM is the host users have: systemd as PID 1 on the unified cgroup v2 hierarchy.
. "$(dirname "$0")/lib.sh"

check "/sys/fs/cgroup is cgroup2fs" sh -c '[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]'
check "systemd is PID 1" sh -c '[ "$(cat /proc/1/comm)" = systemd ]'
check "the root cgroup offers memory, pids and cpu" \
  sh -c 'for c in memory pids cpu; do grep -qw $c /sys/fs/cgroup/cgroup.controllers || exit 1; done'
check "the system finished booting (running or degraded)" \
  sh -c 's=$(systemctl is-system-running); echo "$s"; systemctl --failed --no-legend; [ "$s" = running ] || [ "$s" = degraded ]'
finish
