#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README's layout block matches the tree: it names every top-level folder and every
# folder of broker/, and each folder it names exists.
set -eu
src=${1:?usage: readme-layout.sh SOURCE_DIR}
block=$(sed -n '/^## Layout/,/^## /p' "$src/README.md" | sed -n '/^```$/,/^```$/p')
fail=0
for dir in "$src"/*/; do
  name=$(basename "$dir")
  case $name in build*) continue ;; esac
  git -C "$src" ls-files --error-unmatch "$name" >/dev/null 2>&1 || continue
  printf '%s\n' "$block" | grep -q "^$name/ " || { echo "FAIL: the README's layout does not name $name/"; fail=1; }
done
for dir in "$src"/broker/*/; do
  name=$(basename "$dir")
  printf '%s\n' "$block" | grep -Eq "^ +$name/ " || { echo "FAIL: the README's layout does not name broker/$name/"; fail=1; }
done
for name in $(printf '%s\n' "$block" | sed -n 's|^\([a-z-]*\)/ .*|\1|p'); do
  [ -d "$src/$name" ] || { echo "FAIL: the README's layout names $name/, which is not in the tree"; fail=1; }
done
for name in $(printf '%s\n' "$block" | sed -n 's|^ \{15\}\([a-z]*\)/ .*|\1|p'); do
  [ -d "$src/broker/$name" ] || { echo "FAIL: the README's layout names broker/$name/, which is not in the tree"; fail=1; }
done
[ "$fail" = 0 ] && echo "ok: the README's layout matches the tree"
exit "$fail"
