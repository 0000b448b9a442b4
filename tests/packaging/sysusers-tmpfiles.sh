#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# sysusers-tmpfiles.sh SYSUSERS TMPFILES: in an empty root, systemd-sysusers makes the
# service user from SYSUSERS and systemd-tmpfiles then makes brokerd's folders from
# TMPFILES, owned by that user (the order the package's postinst runs them in).
set -eu
sysusers=$1 tmpfiles=$2
command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null \
  || { echo "SKIP: systemd-sysusers or systemd-tmpfiles is not installed"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: making folders owned by another user needs root"; exit 77; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc"
systemd-sysusers --root="$root" "$sysusers"
line=$(grep '^boxmaker:' "$root/etc/passwd") || { echo "FAIL: no user boxmaker"; exit 1; }
uid=$(echo "$line" | cut -d: -f3)
gid=$(echo "$line" | cut -d: -f4)
home=$(echo "$line" | cut -d: -f6)
[ "$home" = /var/lib/boxmaker ] || { echo "FAIL: boxmaker's home is $home"; exit 1; }
grep -q "^boxmaker:x:$gid:" "$root/etc/group" || { echo "FAIL: no group boxmaker"; exit 1; }
systemd-tmpfiles --root="$root" --create "$tmpfiles"
for dir in /run/boxmaker /var/lib/boxmaker /var/log/boxmaker; do
  got=$(stat -c '%u:%g %a' "$root$dir") || { echo "FAIL: $dir was not made"; exit 1; }
  [ "$got" = "$uid:$gid 750" ] || { echo "FAIL: $dir is $got, not $uid:$gid 750"; exit 1; }
done
echo "PASS: sysusers makes boxmaker ($uid:$gid); tmpfiles makes its folders, 0750"
