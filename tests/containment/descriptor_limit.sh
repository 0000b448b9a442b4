#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One uid cannot run brokerd out of descriptors.  With max_connections 1000 (500 a uid),
# one uid's served and waiting connections took more descriptors than brokerd's soft limit
# of 1024 (the usual default, systemd's too): from then on accept() failed for every uid
# ("cannot accept a connection: Too many open files", 178 times in 5 s) and another uid's
# call went unanswered until the flood's waiting connections passed queue_ms.  brokerd now
# raises its soft limit to what max_connections and max_running need (2 x 1000 + 16 x 16 +
# 128 = 2384 here), and says so when the hard limit is lower.  The flood itself is
# bench-sized; what is checked here is the limit it meets and the warning.  Needs no
# sandbox: the refusing runtime answers.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP descriptor_limit: does not apply to ${BX_CONTAINMENT_MODULE}.so: no sandbox runs"
  echo "(the refusing runtime answers); it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=refusing
. "$(dirname "$0")/lib.sh"
command -v prlimit > /dev/null || skip "prlimit is not installed (util-linux)"
hard=$(ulimit -H -n)
[ "$hard" = unlimited ] || [ "$hard" -ge 2384 ] || skip "the hard limit ($hard) is below 2384"

# limit NAME SOFT:HARD: starts brokerd NAME with max_connections 1000 and that limit.
limit () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
socket_mode: 0666
home: $work/home
max_connections: 1000
max_running: 16
grants:
  - tools: [read_file]
    paths: [$work/g]
YAML
  prlimit --nofile="$2" "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" \
    2> "$work/$1.log" &
  bpid=$!
  pids="$pids $bpid"
  wait_socket "$work/$1.sock" $bpid
  [ -S "$work/$1.sock" ] || { echo "brokerd $1 did not start:"; cat "$work/$1.log"; exit 1; }
}
mkdir -p "$work/g"

limit raised "1024:$hard"
soft=$(awk '/^Max open files/ { print $4 }' "/proc/$bpid/limits")
[ "$soft" = 2384 ] && pass "brokerd raised its soft limit from 1024 to what its limits need ($soft)" \
  || fail "brokerd's soft limit is $soft, not 2384"
! grep -q 'may open' "$work/raised.log" && pass "and says nothing about it" \
  || fail "a warning where the limit could be raised: $(cat "$work/raised.log")"

limit low 1024:1024
grep -q 'brokerd may open 1024 descriptors, and max_connections 1000 with max_running 16 may need 2384' \
  "$work/low.log" && pass "a hard limit too low is logged" \
  || fail "no warning with a hard limit of 1024: $(cat "$work/low.log")"
finish
