#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What boxmaker-dev gives a runtime's author stands alone: the package suggests
# boxmaker-tools (toolkit, which every module runs), and the header, the walk-through, its
# example and the two man pages name no file the package does not install (no path of the
# source tree, no source file but the example's own, no other document).
#
#   dev-docs-stand-alone.sh SOURCE_DIR
set -u
src=$1
fail () {
  echo "FAIL: $*"
  status=1
}
status=0

# boxmaker-dev's Suggests in debian/control, continuation lines joined.
suggests=$(awk '
  /^Package: / { p = ($2 == "boxmaker-dev") }
  p && /^Suggests:/ { s = 1; print; next }
  p && s && /^[ \t]/ { print; next }
  { s = 0 }' "$src/packaging/debian/control" | tr '\n' ' ')
echo "boxmaker-dev $suggests"
echo "$suggests" | grep -Eq '(:|,) *boxmaker-tools *(,|$| )' \
  || fail "boxmaker-dev does not suggest boxmaker-tools"

for f in plugins-api/include/boxmaker/runtime.h docs/writing-a-runtime.md \
         docs/examples/echo-runtime.c docs/examples/Makefile \
         docs/man/boxmaker-runtime.7.scd docs/man/boxmaker-runtime-check.1.scd; do
  # A folder of the source tree, or a script or a C file of it.
  hits=$(grep -nE '(^|[^A-Za-z0-9_./-])(docs|tests|runtimes|toolkit|broker|proto|base|host|packaging|plugins-api)/[A-Za-z]' "$src/$f")
  [ -z "$hits" ] || fail "$f names a folder of the source tree: $hits"
  hits=$(grep -noE '[A-Za-z0-9_-]+\.(sh|c|md)\b' "$src/$f" \
    | grep -vE ':(echo-runtime\.c|echo\.c|mymodule\.c|writing-a-runtime\.md)$')
  [ -z "$hits" ] || fail "$f names a file boxmaker-dev does not install: $hits"
done
[ "$status" = 0 ] && echo "ok: boxmaker-dev's documents stand alone"
exit "$status"
