#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The approvals benchmark, in one command (bench/README.md, section approvals):
#
#   bench/approvals/run.sh [BUILD_DIR]
#
# Builds brokerd, fake.so, boxmaker and the load generator (Release) in BUILD_DIR (default
# build-bench at the top of the tree) and starts brokerd with fake.so, max_connections 16
# (fewer than the calls that wait; all callers are one uid, so its own cap is raised), a
# read_file grant that needs no approval and one with `approval: always`.  Then, in one run,
# ordinary read_file calls (one client, then 8 at once) with no call waiting, and again with
# BENCH_WAITING calls (default 50) waiting for approval: latency, calls per second, brokerd's
# CPU per call, its threads and resident memory, and the ratios.  Stopping brokerd at the end
# answers every waiting call; the script checks that each got its denial.
# Knobs: BENCH_SEQ (5000), BENCH_PAR (20000), BENCH_CLIENTS (8), BENCH_WAITING (50).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-bench}
seq_calls=${BENCH_SEQ:-5000}
par_calls=${BENCH_PAR:-20000}
clients=${BENCH_CLIENTS:-8}
waiting=${BENCH_WAITING:-50}

. "$top/bench/lib.sh"
bench_build "$build" brokerd fake_runtime boxmaker bx_bench_broker
bench_workdir approvals
mkdir -p "$work/held"
bench_fake_config "$work/brokerd.yaml" 16 "max_connections_per_uid: 1000
admin_socket: $work/admin.sock
admin_group: 4242" "  - tools: [read_file]
    paths: [$work/held]
    approval: always
    approval_timeout: 1h"

load="$build/client/bx_bench_broker"
args="{\"path\":\"$work/data/file\"}"
bench_start_brokerd "$build" "$work/brokerd.yaml" "$work/admin.sock"

# measure NAME: bench_measure, then brokerd's threads and memory in $work/NAME.state.
measure () {
  bench_measure "$1" "$work/broker.sock" "$broker_pid"
  echo "threads=$(ls "/proc/$broker_pid/task" | wc -l) rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$broker_pid/status")" > "$work/$1.state"
}

measure alone

k=0
while [ $k -lt "$waiting" ]; do
  k=$((k + 1))
  "$build/client/boxmaker" call read_file "{\"path\":\"$work/held/f$k\"}" \
    --socket "$work/broker.sock" --session "held$k" --timeout-ms 600000 \
    > "$work/held$k.out" 2>&1 &
done
i=0
while [ "$("$build/client/boxmaker" approvals --json --admin-socket "$work/admin.sock" \
          | grep -o '"approval":"' | wc -l)" -lt "$waiting" ]; do
  i=$((i + 1))
  [ $i -gt 200 ] && { echo "the $waiting calls did not all start to wait" >&2; exit 1; }
  sleep 0.05
done

measure waiting

echo
printf '%-16s %7s %9s %9s %9s %13s %8s %8s\n' "calls waiting" clients calls/s p50_us p99_us \
  server_cpu_us threads rss_kb
for name in alone waiting; do
  n=0
  [ $name = waiting ] && n=$waiting
  for kind in seq par; do
    f="$work/$name.$kind"
    printf '%-16s %7s %9s %9s %9s %13s %8s %8s\n' "$n" "$(field "$f" clients)" \
      "$(field "$f" calls_per_s)" "$(field "$f" p50_us)" "$(field "$f" p99_us)" \
      "$(field "$f" server_cpu_us)" "$(field "$work/$name.state" threads)" \
      "$(field "$work/$name.state" rss_kb)"
  done
done
echo
for kind in seq par; do
  awk -v a="$(field "$work/alone.$kind" p50_us)" -v b="$(field "$work/waiting.$kind" p50_us)" \
      -v ra="$(field "$work/alone.$kind" calls_per_s)" -v rb="$(field "$work/waiting.$kind" calls_per_s)" \
      -v k="$kind" -v w="$waiting" \
      'BEGIN { printf "%s: p50 with %d waiting / alone = %.2f, calls/s with / alone = %.2f\n", k, w, b / a, rb / ra }'
done

# Stopping brokerd answers every waiting call.
kill "$broker_pid"
wait "$broker_pid" || true
broker_pid=
wait
denied=$(grep -l "denied: brokerd stopped before the owner answered" "$work"/held*.out | wc -l)
echo "after SIGTERM: $denied of $waiting waiting calls were denied"
[ "$denied" = "$waiting" ]
