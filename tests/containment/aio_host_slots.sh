#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One sandbox cannot take Linux AIO from the whole host.  The kernel counts the events of
# every AIO context (io_setup) against one limit for the machine, fs.aio-max-nr (65536 by
# default), in no namespace and for no uid: a call that took them all would leave every host
# program that uses it (a database server, QEMU) unable to start its IO while the call runs.
# A call takes every AIO event it can and holds them; meanwhile a host process must still
# get one.  (gVisor's kernel keeps AIO of its own, without a limit: a call there takes as
# many as it asks for, and none of the host's.)
. "$(dirname "$0")/lib.sh"

if [ "$(cat /proc/sys/fs/aio-nr)" -ge "$(cat /proc/sys/fs/aio-max-nr)" ]; then
  echo "SKIP $case_name: the host's programs hold every AIO event already ($(cat /proc/sys/fs/aio-nr) of $(cat /proc/sys/fs/aio-max-nr))"
  exit 77
fi
writable_folder "$work/w"
build_probe "$work/w/probe"
start_brokerd a "" "" "  - tools: [shell]
    paths: [$work/w]"

"$boxmaker" call shell "{\"command\":\"./probe aio-take $work/w/took\",\"cwd\":\"$work/w\"}" \
  --socket "$work/a.sock" --session "$session" --call a1 > "$work/a.out" 2>&1 &
holder=$!
pids="$pids $holder"
wait_written "$work/w/took" $holder
if [ ! -s "$work/w/took" ]; then
  fail "the call did not take its AIO events: $(cat "$work/a.out")"
  finish
fi
took=$(cat "$work/w/took")
host=$("$work/w/probe" aio-one)
# On the host's kernel the seccomp table refuses io_setup; gVisor's kernel has its own.
[ "$module" = gvisor ] || [ "$took" = "took=0 ENOSYS" ] \
  || fail "a call took host AIO events: $took (fs.aio-max-nr $(cat /proc/sys/fs/aio-max-nr))"
contains "$host" "aio-one=ok" \
  && pass "a host process gets an AIO event while a call holds what it could take ($took)" \
  || fail "a host process gets no AIO event while a call holds what it could take ($took): $host"
touch "$work/w/took.release"
wait $holder
finish
