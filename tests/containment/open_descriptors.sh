#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A sandbox holds no descriptor of the host's.  bwrap.so mounted a read-only copy of each
# protected path of a writable folder in the sandbox's process and left the copy's O_PATH
# descriptor open, not close-on-exec and never named to bubblewrap, so it reached the
# command: "/proc/self/fd/N/.." was the granted folder as the host mounts it, and "../.." the
# host's folder above it, up to the host's root, readable and writable as the sandbox's uid.
# A shell in a writable folder with the default protected paths lists its descriptors, and
# reads and writes through every one of them above its grant: only 0, 1 and 2 (and the
# shell's own) may be open, and nothing beside the grant may be read or made.
. "$(dirname "$0")/lib.sh"

mkdir -p "$work/open"
# A folder beside the grant that anyone may write (as the host's /tmp is), granted to none.
chmod 1777 "$work/open"
writable_folder "$work/w"
echo "beside the grant" > "$work/beside.txt"
chmod a+r "$work/beside.txt"

start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"
# ls runs as a child of the shell, so the descriptors it lists are what the shell passed on.
call b shell "{\"command\":\"ls /proc/self/fd; for d in /proc/self/fd/*; do cat \$d/../../beside.txt; echo x > \$d/../../open/planted-\${d##*/}; done 2>/dev/null; echo done\",\"cwd\":\"$work/w\"}"
echo "inside:"
printf '%s\n' "$out"
contains "$out" "done" || fail "the shell call did not run: rc=$rc out=$out err=$err"
# Descriptors above 2: ls's own directory handle of /proc/self/fd is one (3), nothing else.
extra=$(printf '%s\n' "$out" | sed -n '1,/^done$/p' | grep -xE '[0-9]+' | awk '$1 > 3' | tr '\n' ' ')
[ -z "$extra" ] && pass "the command inherits no descriptor beyond its standard three" \
  || fail "descriptors open in the sandbox: $extra"
! contains "$out" "beside the grant" && pass "no descriptor leads to a host file beside the grant" \
  || fail "read a host file beside the grant through a descriptor: $out"
planted=$(ls "$work/open")
[ -z "$planted" ] && pass "no descriptor lets the sandbox write beside its grant" \
  || fail "the sandbox wrote on the host beside its grant: $planted"
finish
