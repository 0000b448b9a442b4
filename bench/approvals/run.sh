#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The approvals benchmark, in one command (bench/README.md, section approvals):
#
#   bench/approvals/run.sh [BUILD_DIR]
#
# Builds brokerd, fake.so, boxmaker and the load generator (Release) in BUILD_DIR (default
# build-bench at the top of the tree) and starts brokerd with fake.so, max_connections 16 (fewer than the calls that wait), a
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

echo "building in $build ..."
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target brokerd fake_runtime boxmaker bx_bench_broker -j2 >/dev/null

work=$(mktemp -d /tmp/bx-bench-approvals.XXXXXX)
broker_pid=
cleanup () {
  set +e
  [ -z "$broker_pid" ] || { kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null; }
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkdir -p "$work/data" "$work/held" "$work/home"
echo hello > "$work/data/file"
cat > "$work/brokerd.yaml" <<EOF
socket: $work/broker.sock
admin_socket: $work/admin.sock
admin_group: 4242
home: $work/home
max_connections: 16
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: fixed
    content: hello
grants:
  - tools: [read_file]
    paths: [$work/data]
  - tools: [read_file]
    paths: [$work/held]
    approval: always
    approval_timeout: 1h
EOF

load="$build/client/bx_bench_broker"
args="{\"path\":\"$work/data/file\"}"
"$build/broker/brokerd" --config "$work/brokerd.yaml" --runtimedir "$build/runtimes/modules" \
  2> "$work/brokerd.err" &
broker_pid=$!
i=0
while [ ! -S "$work/admin.sock" ]; do
  i=$((i + 1))
  [ $i -gt 100 ] && { echo "brokerd did not start" >&2; cat "$work/brokerd.err" >&2; exit 1; }
  sleep 0.05
done

cpu_ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
field () { tr ' ' '\n' < "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# measure NAME: one client, then CLIENTS at once; the figures in $work/NAME.seq and .par.
measure () {
  "$load" "$work/broker.sock" 1000 "$clients" read_file "$args" >/dev/null
  for kind in seq par; do
    if [ $kind = seq ]; then n=$seq_calls c=1; else n=$par_calls c=$clients; fi
    t0=$(cpu_ticks "$broker_pid")
    "$load" "$work/broker.sock" "$n" "$c" read_file "$args" > "$work/$1.$kind"
    t1=$(cpu_ticks "$broker_pid")
    awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" \
      'BEGIN { printf " server_cpu_us=%.1f\n", t * 1e6 / hz / n }' >> "$work/$1.$kind"
    tr -d '\n' < "$work/$1.$kind" > "$work/tmp" && mv "$work/tmp" "$work/$1.$kind"
  done
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
