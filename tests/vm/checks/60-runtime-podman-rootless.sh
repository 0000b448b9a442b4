#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 900  (the most it may take under software emulation; see guest-checks.sh)
# The installed service with rootless podman on cgroup v2, set up as
# boxmaker-runtime-podman's README.Debian says: subordinate ids, boxmaker's user manager
# (loginctl enable-linger), the drop-in brokerd-rootless.conf with boxmaker's uid, the tools
# image built as boxmaker with the README's command.  Calls through the installed boxmaker
# run, and the limits the config promises hold: the container's own cgroup files say so,
# and a process over its memory limit stops the call with the fixed sentence (before,
# every call failed, or with crun ran with no limit at all).
. "$(dirname "$0")/lib.sh"

conf=/etc/boxmaker/brokerd.yaml
grant=/srv/bx-vm-rootless
uid=$(id -u boxmaker)
cp "$conf" /tmp/bx-60-brokerd.yaml
mkdir -p "$grant" /etc/systemd/system/brokerd.service.d
echo "hello from the host" > "$grant/notes.txt"
chown boxmaker:boxmaker "$grant"

check "subordinate ids for boxmaker" \
  usermod --add-subuids 100000-165535 --add-subgids 100000-165535 boxmaker
linger() { loginctl enable-linger boxmaker && wait_for 120 test -S "/run/user/$uid/bus"; }
check "loginctl enable-linger boxmaker starts its user manager and bus" linger
check "install the drop-in as README.Debian says" \
  sh -c 'sed "s/@UID@/$(id -u boxmaker)/g" \
           /usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootless.conf \
           > /etc/systemd/system/brokerd.service.d/rootless.conf && systemctl daemon-reload'
# README.Debian's command, from root's shell (whose XDG_RUNTIME_DIR is not boxmaker's).
image=$(cd /var/lib/boxmaker && XDG_RUNTIME_DIR=/run/user/0 runuser -u boxmaker -- env -i \
          HOME=/var/lib/boxmaker PATH=/usr/sbin:/usr/bin:/sbin:/bin \
          XDG_RUNTIME_DIR=/run/user/$uid \
          /usr/share/boxmaker/image/build-image.sh 2>/tmp/bx-60-image.log | tail -n 1)
case $image in
  localhost/boxmaker-tools@sha256:*) pass "README.Debian's rootless image command builds $image" ;;
  *) fail "README.Debian's rootless image command: $(tail -n 5 /tmp/bx-60-image.log)" ;;
esac
cat > "$conf" <<EOC
socket: /run/boxmaker/broker.sock
home: /var/lib/boxmaker
runtime:
  module: podman
  options:
    image: $image
    run_options: [--pull=never]
    memory: 64m
    pids: 100
    cpus: 0.5
grants:
  - tools: [read_file, shell]
    paths: [$grant]
audit: stderr
EOC
since=$(date '+%Y-%m-%d %H:%M:%S')
check "systemctl restart brokerd.service with rootless podman" \
  sh -c 'systemctl restart brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
bx() { /usr/bin/boxmaker call --timeout-ms 120000 "$@" 2>&1; }
check "read_file runs in a rootless container" \
  sh -c "$(declare -f bx); bx read_file '{\"path\":\"$grant/notes.txt\"}' | grep -q 'hello from the host'"
limits() {
  local out
  out=$(bx shell '{"command":"cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max"}')
  echo "$out"
  printf '%s\n' "$out" | grep -qx 67108864 && printf '%s\n' "$out" | grep -qx 100 \
    && printf '%s\n' "$out" | grep -qx '50000 100000'
}
check "the container's cgroup holds memory 64m, pids 100, cpus 0.5" limits
cat > /tmp/bx-60-hog.json <<'EOJ'
{"command":"dd if=/dev/zero of=/dev/null bs=120M count=1"}
EOJ
# podman.so sets memory.oom.group on cgroup v2: the kernel's kill takes the whole
# container, not only the process over the limit (dd, which the shell execs), so the call
# ends with the fixed sentence, as on cgroup v1.
check "over the memory limit: the container is stopped, the fixed sentence" \
  sh -c "$(declare -f bx); bx shell @/tmp/bx-60-hog.json | grep -q 'the tool was stopped: it ran out of memory or was killed'"
check "podman found boxmaker's user manager (no fallback to cgroupfs)" \
  sh -c "! journalctl --since '$since' -u brokerd --no-pager -o cat | grep -i 'no systemd user session'"
check "systemctl stop brokerd.service ends cleanly" \
  sh -c 'systemctl stop brokerd.service && [ "$(systemctl show -P Result brokerd.service)" = success ]'
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'

# Back to the packages as installed.
rm -f /etc/systemd/system/brokerd.service.d/rootless.conf
cp /tmp/bx-60-brokerd.yaml "$conf"
(cd /var/lib/boxmaker && runuser -u boxmaker -- env -i HOME=/var/lib/boxmaker \
   PATH=/usr/sbin:/usr/bin:/sbin:/bin XDG_RUNTIME_DIR=/run/user/$uid \
   podman system reset --force >/dev/null 2>&1)
loginctl disable-linger boxmaker
usermod --del-subuids 100000-165535 --del-subgids 100000-165535 boxmaker
rm -rf "$grant" /tmp/bx-60-hog.json /tmp/bx-60-image.log
systemctl daemon-reload
systemctl restart brokerd.service >/dev/null 2>&1
finish
