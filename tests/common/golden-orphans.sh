#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails on a golden file that no test of its area names (libvirt's check for orphaned test
# data): a file nothing compares with would keep passing whatever the code does.
#   golden-orphans.sh TESTS_DIR
set -u
tests=$1
status=0
count=0
for file in "$tests"/*/golden/*; do
  [ -f "$file" ] || continue
  count=$((count + 1))
  name=$(basename "$file")
  area=$(dirname "$(dirname "$file")")
  if ! grep -rqwF --include='*.c' --include='*.h' --include='*.sh' "$name" "$area"; then
    echo "FAIL: no test uses $file"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "ok: every one of $count golden files is used"
exit "$status"
