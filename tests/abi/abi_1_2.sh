#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A module built against the 1.2 header as it shipped (tests/abi/abi-1.2: its table ends at
# check_root, its host table at spec_tool_id) loads into this host and runs: the host reads
# only the fields its table has, and reads no flags from it (a 1.2 module declares nothing).
# usage: abi_1_2.sh WALK_HOST DIR_WITH_echo.so
set -eu
host=$1
dir=$2
out=$("$host" "$dir" echo prefix=old wait=2s) || { echo "$out"; echo "FAIL: the 1.2 module was refused"; exit 1; }
echo "$out"
want='log echo 2: ready, answering at most 65536 bytes a call
module echo 1.2
ok: old: read_file {"path":"/home/me/notes/a.txt"}
ro /home/me/notes/a.txt
ok (truncated): old: read_fi
log echo 1: call call-2 wants the network
failed: the echo runtime has no network
failed: the tool ran past its time limit
failed: the call was cancelled
call-4 ended within 1 s of its cancellation
unavailable: the runtime module is too old for this tool'
[ "$out" = "$want" ] || { echo "FAIL: expected:"; echo "$want"; exit 1; }
echo "ok: a module built against the runtime ABI 1.2 header loads and runs"
