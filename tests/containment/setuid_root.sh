#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 2: a setuid-root file left on the host.  The sandbox's root is not host root: what
# it writes into a grant belongs to the sandbox's own unprivileged uid, so a setuid bit it
# sets gives nobody root.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
start_brokerd b "" "" "  - tools: [shell, read_file]
    paths: [$work/w]"
call b shell "{\"command\":\"cp /bin/busybox sh4755 && chmod 4755 sh4755; cp /bin/busybox sh2755 && chmod 2755 sh2755; chown 0:0 sh4755; id -u; ls -ln\",\"cwd\":\"$work/w\"}"
[ $rc = 0 ] || fail "the shell call did not run: rc=$rc out=$out err=$err"
bad=$(find "$work/w" \( -perm -4000 -user 0 \) -o \( -perm -2000 -group 0 \) 2>/dev/null)
[ -z "$bad" ] && pass "no setuid/setgid-root file left on the host" \
  || fail "setuid/setgid root files on the host: $bad ($(ls -ln "$work/w"))"
owner=$(stat -c %u "$work/w/sh4755" 2>/dev/null)
[ "$owner" = "$sandbox_uid" ] && pass "files the sandbox writes belong to uid $sandbox_uid" \
  || fail "owner of a sandbox's file: '$owner', expected $sandbox_uid"

# A grant the sandbox uid was not given stays unwritable, even by the sandbox's root.
mkdir -p "$work/rootonly"
start_brokerd r "" "" "  - tools: [shell]
    paths: [$work/rootonly]"
call r shell "{\"command\":\"touch x; echo rc=\$?\",\"cwd\":\"$work/rootonly\"}"
[ ! -e "$work/rootonly/x" ] && pass "a root-owned 0755 grant is not writable by the sandbox" \
  || fail "the sandbox wrote into a root-owned folder: $out"
finish
