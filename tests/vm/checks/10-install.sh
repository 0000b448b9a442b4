#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lane-seconds: 900  (the most it may take under software emulation; see guest-checks.sh)
# The packages the lane built install with apt and nothing else: every dependency is in the
# image, and the VM has no network.
. "$(dirname "$0")/lib.sh"

install_debs() {
  local debs=() d
  for d in "$BX_DEBS"/*.deb; do
    case $d in *-dbgsym_*) ;; *) debs+=("$d") ;; esac
  done
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    -o Dpkg::Options::=--force-confnew "${debs[@]}"
}
check "apt-get install ./*.deb (offline)" install_debs
check "every boxmaker package is installed" sh -c '
  for d in "$BX_DEBS"/*.deb; do
    case $d in *-dbgsym_*) continue ;; esac
    p=$(dpkg-deb -f "$d" Package)
    dpkg-query -W -f "\${Status}\n" "$p" | grep -qx "install ok installed" || { echo "$p"; exit 1; }
  done'
check "the service user boxmaker exists" id boxmaker
check "brokerd.service is enabled" systemctl is-enabled brokerd.service
check "brokerd.service was started at install" \
  sh -c 'systemctl is-active brokerd.service || { systemctl status --no-pager brokerd.service; exit 1; }'
check "bwrap.so's read-only root was built" test -x /var/lib/boxmaker-bwrap/rootfs/bin/busybox
finish
