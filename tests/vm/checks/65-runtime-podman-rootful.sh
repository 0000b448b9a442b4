#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 900  (the most it may take under software emulation; see guest-checks.sh)
# The installed service with rootful podman on cgroup v2, set up as
# boxmaker-runtime-podman's README.Debian says (the drop-in brokerd-rootful.conf: root,
# RestrictSUIDSGID and the other seccomp filters; the tools image built as root), with
# podman's default OCI runtime (crun): calls through the installed boxmaker run, files a
# sandbox writes belong to uid 700000000, a setuid bit is refused, and the limits hold.
. "$(dirname "$0")/lib.sh"

conf=/etc/boxmaker/brokerd.yaml
grant=/srv/bx-vm-rootful
cp "$conf" /tmp/bx-65-brokerd.yaml
mkdir -p "$grant" /etc/systemd/system/brokerd.service.d
echo "hello from the host" > "$grant/notes.txt"
chown 700000000:700000000 "$grant"
check "install the drop-in as README.Debian says" \
  sh -c 'cp /usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootful.conf \
           /etc/systemd/system/brokerd.service.d/rootful.conf && systemctl daemon-reload'
image=$(/usr/share/boxmaker/image/build-image.sh 2>/tmp/bx-65-image.log | tail -n 1)
case $image in
  localhost/boxmaker-tools@sha256:*) pass "build-image.sh as root builds $image" ;;
  *) fail "build-image.sh as root: $(tail -n 5 /tmp/bx-65-image.log)" ;;
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
check "systemctl restart brokerd.service with rootful podman" \
  sh -c 'systemctl restart brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
check "brokerd runs as root" \
  sh -c '[ "$(ps -o user= -p "$(systemctl show -P MainPID brokerd.service)")" = root ]'
bx() { /usr/bin/boxmaker call --timeout-ms 120000 "$@" 2>&1; }
check "read_file runs in a rootful container" \
  sh -c "$(declare -f bx); bx read_file '{\"path\":\"$grant/notes.txt\"}' | grep -q 'hello from the host'"
suid() {
  local out
  out=$(bx shell "{\"command\":\"cp /bin/busybox s; chmod 4755 s; echo chmod=\$?; touch made\",\"cwd\":\"$grant\"}")
  echo "$out"; ls -ln "$grant"
  printf '%s\n' "$out" | grep -q chmod=1 && [ ! -u "$grant/s" ] \
    && [ "$(stat -c %u "$grant/made")" = 700000000 ]
}
check "files a sandbox writes belong to uid 700000000; chmod 4755 is refused" suid
limits() {
  local out
  out=$(bx shell '{"command":"cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max"}')
  echo "$out"
  printf '%s\n' "$out" | grep -qx 67108864 && printf '%s\n' "$out" | grep -qx 100 \
    && printf '%s\n' "$out" | grep -qx '50000 100000'
}
check "the container's cgroup holds memory 64m, pids 100, cpus 0.5" limits
cat > /tmp/bx-65-hog.json <<'EOJ'
{"command":"dd if=/dev/zero of=/dev/null bs=120M count=1"}
EOJ
# podman.so sets memory.oom.group on cgroup v2: the kernel's kill takes the whole
# container, not only the process over the limit (dd, which the shell execs), so the call
# ends with the fixed sentence, as on cgroup v1.
check "over the memory limit: the container is stopped, the fixed sentence" \
  sh -c "$(declare -f bx); bx shell @/tmp/bx-65-hog.json | grep -q 'the tool was stopped: it ran out of memory or was killed'"
check "systemctl stop brokerd.service ends cleanly" \
  sh -c 'systemctl stop brokerd.service && [ "$(systemctl show -P Result brokerd.service)" = success ]'
[ "$FAILURES" -eq 0 ] || unit_log brokerd.service | sed 's/^/    journal: /'

# Back to the packages as installed.
rm -f /etc/systemd/system/brokerd.service.d/rootful.conf
cp /tmp/bx-65-brokerd.yaml "$conf"
podman rmi -f "$(podman image inspect --format '{{.Id}}' "$image")" >/dev/null 2>&1
rm -rf "$grant" /tmp/bx-65-hog.json /tmp/bx-65-image.log
systemctl daemon-reload
systemctl restart brokerd.service >/dev/null 2>&1
finish
