#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A module built against the 1.0 header (tests/abi/abi-1.0) loads into this host and runs:
# the host reads only the fields its table has, and its output is what it was under 1.0,
# except that the host itself holds it to the spec's output cap (12 bytes in the second
# call).  It knows nothing of time limits or cancellation, so it answers those calls.
# usage: abi_1_0.sh WALK_HOST DIR_WITH_echo.so
set -eu
host=$1
dir=$2
out=$("$host" "$dir" echo prefix=old) || { echo "$out"; echo "FAIL: the 1.0 module was refused"; exit 1; }
echo "$out"
want='log echo 2: ready, answering at most 65536 bytes a call
module echo 1.0
ok: old: read_file {"path":"/home/me/notes/a.txt"}
ro /home/me/notes/a.txt
ok (truncated): old: read_fi
log echo 1: call call-2 wants the network
failed: the echo runtime has no network
ok: old: shell {"command":"true"}
ok: old: shell {"command":"true"}
call-4 ended within 1 s of its cancellation
unavailable: the runtime module is too old for this tool'
[ "$out" = "$want" ] || { echo "FAIL: expected:"; echo "$want"; exit 1; }
echo "ok: a module built against the runtime ABI 1.0 header loads and runs"
