#!/bin/sh
# unit-verifies.sh UNIT BROKERD: systemd-analyze verify accepts the unit, with its programs
# pointed at the build tree's brokerd (verify checks that ExecStart's program exists).
set -eu
unit=$1 brokerd=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s#/usr/sbin/brokerd#$brokerd#g" "$unit" > "$tmp/brokerd.service"
grep -q "^ExecStartPre=$brokerd --check-config /etc/boxmaker/brokerd.yaml$" "$tmp/brokerd.service" \
  || { echo "FAIL: the unit does not check the config before it starts"; exit 1; }
grep -q "^ExecStart=$brokerd --config /etc/boxmaker/brokerd.yaml$" "$tmp/brokerd.service" \
  || { echo "FAIL: the unit does not start brokerd --config /etc/boxmaker/brokerd.yaml"; exit 1; }
# The options that break podman (see the unit's comments) must stay out.
for bad in NoNewPrivileges RestrictNamespaces PrivateDevices ProtectHome ProtectControlGroups \
           SystemCallFilter SystemCallArchitectures LockPersonality MemoryDenyWriteExecute \
           ProtectKernelTunables ProtectKernelModules ProtectKernelLogs ProtectClock \
           ProtectHostname RestrictAddressFamilies RestrictRealtime RestrictSUIDSGID \
           DynamicUser PrivateUsers CapabilityBoundingSet; do
  if grep -q "^$bad=" "$tmp/brokerd.service"; then
    echo "FAIL: $bad= is set: it breaks podman (see the comments in the unit)"
    exit 1
  fi
done
out=$(systemd-analyze verify --man=no "$tmp/brokerd.service" 2>&1) || {
  echo "FAIL: systemd-analyze verify:"; echo "$out"; exit 1; }
# verify also warns without failing; a warning about our unit is a failure here.
if printf '%s\n' "$out" | grep -q "brokerd.service"; then
  echo "FAIL: systemd-analyze verify warns:"; echo "$out"; exit 1
fi
echo "PASS: systemd-analyze verify brokerd.service"
