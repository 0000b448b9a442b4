#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The bundle's config.json and runsc's argument lists against the golden file; with
# BX_REGENERATE_GOLDEN=1 a mismatch rewrites the file instead (review the diff).
#
#   golden.sh PRINT_SPEC GOLDEN
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$1" > "$out" || { echo "FAIL: print-spec failed"; exit 1; }
if ! diff -u "$2" "$out"; then
  if [ "${BX_REGENERATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$2"; echo "rewrote $2"; exit 0; fi
  echo "FAIL: the spec differs from $2 (BX_REGENERATE_GOLDEN=1 rewrites it)"
  exit 1
fi
echo "ok: the spec and the argument lists match $2"
