#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# unit-verifies.sh UNIT BROKERD [DROPIN]: systemd-analyze verify accepts the unit, with its
# programs pointed at the build tree's brokerd (verify checks that ExecStart's program
# exists), and accepts it again with the rootful drop-in DROPIN in its .d folder.
set -eu
unit=$1 brokerd=$2 dropin=${3:-}
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
# Readiness and reload: brokerd speaks sd_notify and re-reads its grants on SIGHUP.
grep -qx 'Type=notify' "$tmp/brokerd.service" && grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$tmp/brokerd.service" \
  || { echo "FAIL: the unit must be Type=notify with ExecReload sending SIGHUP"; exit 1; }
socket_unit="$(dirname "$unit")/brokerd.socket"
if [ -f "$socket_unit" ]; then
  cp "$socket_unit" "$tmp/brokerd.socket"
  grep -qx 'ListenStream=/run/boxmaker/broker.sock' "$tmp/brokerd.socket" \
    || { echo "FAIL: brokerd.socket does not listen on the packaged config's socket"; exit 1; }
  out=$(systemd-analyze verify --man=no "$tmp/brokerd.socket" 2>&1) || {
    echo "FAIL: systemd-analyze verify brokerd.socket:"; echo "$out"; exit 1; }
  if printf '%s\n' "$out" | grep -q "brokerd.socket"; then
    echo "FAIL: systemd-analyze verify warns about brokerd.socket:"; echo "$out"; exit 1
  fi
  echo "PASS: systemd-analyze verify brokerd.socket"
fi

[ -n "$dropin" ] || exit 0
mkdir -p "$tmp/brokerd.service.d"
cp "$dropin" "$tmp/brokerd.service.d/rootful.conf"
grep -qx 'User=root' "$dropin" && grep -qx 'RestrictSUIDSGID=yes' "$dropin" \
  || { echo "FAIL: the rootful drop-in must set User=root and RestrictSUIDSGID=yes"; exit 1; }
out=$(SYSTEMD_UNIT_PATH="$tmp:" systemd-analyze verify --man=no "$tmp/brokerd.service" 2>&1) || {
  echo "FAIL: systemd-analyze verify with the rootful drop-in:"; echo "$out"; exit 1; }
if printf '%s\n' "$out" | grep -q "brokerd.service"; then
  echo "FAIL: systemd-analyze verify warns with the rootful drop-in:"; echo "$out"; exit 1
fi
echo "PASS: systemd-analyze verify brokerd.service with the rootful drop-in"
