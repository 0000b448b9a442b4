#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# unit-verifies.sh UNIT BROKERD [DROPIN]: systemd-analyze verify accepts the unit, with its
# programs pointed at the build tree's brokerd (verify checks that ExecStart's program
# exists), and accepts it again with each drop-in beside it (brokerd-*.conf: the rootful
# DROPIN, bwrap, rootless) in its .d folder.
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
# brokerd.socket's socket lives in /run/boxmaker: the folder must outlive a stop of the service.
grep -qx 'RuntimeDirectory=boxmaker' "$tmp/brokerd.service" \
  && grep -qx 'RuntimeDirectoryPreserve=yes' "$tmp/brokerd.service" \
  || { echo "FAIL: the unit must keep /run/boxmaker across stops (RuntimeDirectoryPreserve=yes)"; exit 1; }
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
grep -qx 'User=root' "$dropin" && grep -qx 'RestrictSUIDSGID=yes' "$dropin" \
  || { echo "FAIL: the rootful drop-in must set User=root and RestrictSUIDSGID=yes"; exit 1; }
grep -qx 'User=root' "$(dirname "$unit")/brokerd-bwrap.conf" \
  && grep -qx 'Delegate=yes' "$(dirname "$unit")/brokerd-bwrap.conf" \
  || { echo "FAIL: the bwrap drop-in must set User=root and Delegate=yes"; exit 1; }
grep -qx 'Environment=XDG_RUNTIME_DIR=/run/user/@UID@' "$(dirname "$unit")/brokerd-rootless.conf" \
  || { echo "FAIL: the rootless drop-in must give podman the user manager's XDG_RUNTIME_DIR"; exit 1; }
# Every drop-in the packages ship, as installed (the rootless one with a uid in place of @UID@).
for d in "$(dirname "$unit")"/brokerd-*.conf; do
  name=$(basename "$d" .conf)
  rm -rf "$tmp/brokerd.service.d"
  mkdir -p "$tmp/brokerd.service.d"
  sed 's/@UID@/1000/g' "$d" > "$tmp/brokerd.service.d/${name#brokerd-}.conf"
  out=$(SYSTEMD_UNIT_PATH="$tmp:" systemd-analyze verify --man=no "$tmp/brokerd.service" 2>&1) || {
    echo "FAIL: systemd-analyze verify with $name.conf:"; echo "$out"; exit 1; }
  if printf '%s\n' "$out" | grep -q "brokerd.service"; then
    echo "FAIL: systemd-analyze verify warns with $name.conf:"; echo "$out"; exit 1
  fi
  echo "PASS: systemd-analyze verify brokerd.service with $name.conf"
done
