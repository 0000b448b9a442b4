#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# man-pages-render.sh PAGE...: each built man page renders with man(1), has the usual
# sections, and groff finds nothing to warn about.
set -eu
command -v man >/dev/null || { echo "SKIP: man (man-db) is not installed"; exit 77; }
status=0
for page in "$@"; do
  name=$(basename "$page")
  out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l -P cat "$page" 2>"$page.warnings") || {
    echo "FAIL: $name does not render"; status=1; continue; }
  if [ -s "$page.warnings" ]; then
    echo "FAIL: $name: man --warnings:"; cat "$page.warnings"; status=1; continue
  fi
  for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    printf '%s\n' "$out" | grep -qx "$section" || {
      echo "FAIL: $name has no $section section"; status=1; }
  done
  echo "PASS: $name renders ($(printf '%s\n' "$out" | wc -l) lines)"
done
exit $status
