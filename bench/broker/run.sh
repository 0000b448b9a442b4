#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The brokerd benchmark, in one command (bench/README.md, section brokerd):
#
#   bench/broker/run.sh [BUILD_DIR]
#
# Builds brokerd, fake.so and the two bench programs (Release) in BUILD_DIR (default
# build-bench at the top of the tree), then, in one run:
#   - brokerd with fake.so (mode fixed, no delay) and a read_file grant: read_file calls
#     through the client library, one client at a time and 8 at once;
#   - the same calls against a bare Unix-socket echo server speaking the same frames (echo),
#     and against the same server with a new thread per connection (echo+thr), which tells
#     what that design would cost;
#   - the 8-client calls in BENCH_ROUNDS rounds that alternate between the three servers,
#     each figure the median of its rounds (max and failures: over all rounds), so a change
#     in the machine's load during the run weighs on every server alike;
#   - the ratios, each server's CPU time per call (from /proc/PID/stat: less noisy than wall
#     time on a shared machine), and brokerd's resident memory at rest and after 100,000
#     calls.
# Knobs (environment): BENCH_SEQ (sequential calls, 10000), BENCH_PAR (calls with 8 clients,
# 89000), BENCH_CLIENTS (8), BENCH_ROUNDS (5).  Warm-up (1000) + SEQ + PAR = the calls
# before the last RSS.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-bench}
seq_calls=${BENCH_SEQ:-10000}
par_calls=${BENCH_PAR:-89000}
clients=${BENCH_CLIENTS:-8}
rounds=${BENCH_ROUNDS:-5}
warm=1000

. "$top/bench/lib.sh"
bench_build "$build" brokerd fake_runtime bx_bench_broker bx_bench_echo
bench_workdir broker
bench_fake_config "$work/brokerd.yaml" 256
load="$build/client/bx_bench_broker"
args="{\"path\":\"$work/data/file\"}"

rss_kb () {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

bench_start_brokerd "$build" "$work/brokerd.yaml" "$work/broker.sock"
sleep 0.2
rss_rest=$(rss_kb "$broker_pid")

"$build/broker/bx_bench_echo" "$work/echo.sock" &
echo_pid=$!
BENCH_MORE_PIDS="$BENCH_MORE_PIDS $echo_pid"
wait_socket "$work/echo.sock"
"$build/broker/bx_bench_echo" "$work/thr.sock" --thread &
thr_pid=$!
BENCH_MORE_PIDS="$BENCH_MORE_PIDS $thr_pid"
wait_socket "$work/thr.sock"

# The socket and the pid of server NAME.
server () {
  case $1 in
    brokerd) sock=$work/broker.sock pid=$broker_pid ;;
    echo) sock=$work/echo.sock pid=$echo_pid ;;
    echo+thr) sock=$work/thr.sock pid=$thr_pid ;;
  esac
}
servers="brokerd echo echo+thr"
for name in $servers; do
  server "$name"
  "$load" "$sock" "$warm" "$clients" read_file "$args" >/dev/null
  bench_load "$name" "$sock" "$pid" "$seq_calls" 1 "$work/$name.seq"
done
r=1
while [ $r -le "$rounds" ]; do
  for name in $servers; do
    server "$name"
    bench_load "$name" "$sock" "$pid" $((par_calls / rounds)) "$clients" "$work/$name.par.$r"
  done
  r=$((r + 1))
done
rss_after=$(rss_kb "$broker_pid")
total=$((warm + seq_calls + par_calls / rounds * rounds))

# Field K of NAME's rounds, one per line.
rounds_of () { for f in "$work/$1".par.*; do field "$f" "$2"; done; }
median () {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
sum () { awk '{ n += $1 } END { print n }'; }
for name in $servers; do
  {
    printf 'clients=%s calls=%s' "$clients" "$(rounds_of "$name" calls | sum)"
    for k in calls_per_s p50_us p99_us server_cpu_us client_cpu_us; do
      printf ' %s=%s' "$k" "$(rounds_of "$name" $k | median)"
    done
    printf ' max_us=%s' "$(rounds_of "$name" max_us | sort -n | tail -n 1)"
    printf ' failures=%s\n' "$(rounds_of "$name" failures | sum)"
  } > "$work/$name.par"
done
# 50,000 more: memory that only grew with the first calls (arenas, caches) stays put now.
"$load" "$work/broker.sock" 50000 "$clients" read_file "$args" >/dev/null
sleep 1
rss_settled=$(rss_kb "$broker_pid")
threads=$(ls "/proc/$broker_pid/task" | wc -l)
echo_rss=$(rss_kb "$echo_pid")
uptime_load=$(cut -d' ' -f1-3 /proc/loadavg)

echo
printf '%-9s %7s %9s %9s %9s %9s %13s %13s %7s\n' server clients calls/s p50_us p99_us \
  max_us server_cpu_us client_cpu_us failed
for name in brokerd echo echo+thr; do
  for kind in seq par; do
    f="$work/$name.$kind"
    printf '%-9s %7s %9s %9s %9s %9s %13s %13s %7s\n' "$name" "$(field "$f" clients)" \
      "$(field "$f" calls_per_s)" "$(field "$f" p50_us)" "$(field "$f" p99_us)" \
      "$(field "$f" max_us)" "$(field "$f" server_cpu_us)" "$(field "$f" client_cpu_us)" \
      "$(field "$f" failures)"
  done
done
echo "(with $clients clients: the median of $rounds rounds alternating between the servers," \
  "$((par_calls / rounds)) calls each; max and failed over all rounds)"
echo
for kind in seq par; do
  awk -v k="$kind" \
    -v bt="$(field "$work/brokerd.$kind" calls_per_s)" -v et="$(field "$work/echo.$kind" calls_per_s)" \
    -v b50="$(field "$work/brokerd.$kind" p50_us)" -v e50="$(field "$work/echo.$kind" p50_us)" \
    -v b99="$(field "$work/brokerd.$kind" p99_us)" -v e99="$(field "$work/echo.$kind" p99_us)" \
    -v bc="$(field "$work/brokerd.$kind" server_cpu_us)" \
    -v ec="$(field "$work/echo.$kind" server_cpu_us)" \
    -v tc="$(field "$work/echo+thr.$kind" server_cpu_us)" \
    'BEGIN { printf "ratio brokerd/echo (%s): calls/s %.2f, p50 %.2fx, p99 %.2fx, " \
             "server CPU per call %.2fx (a thread per connection alone: %.2fx)\n", \
             k, bt / et, b50 / e50, b99 / e99, bc / ec, tc / ec }'
done
for name in brokerd echo; do
  awk -v n="$name" -v cpus="$(nproc)" -v s="$(field "$work/$name.par" server_cpu_us)" \
    -v c="$(field "$work/$name.par" client_cpu_us)" \
    'BEGIN { printf "%s: %.0f us of CPU per call (server %.0f + client %.0f): at most %.0f " \
             "calls/s on %d idle CPUs\n", n, s + c, s, c, cpus * 1e6 / (s + c), cpus }'
done
echo
echo "brokerd RSS: at rest ${rss_rest} kB, after $total calls ${rss_after} kB," \
  "after $((total + 50000)) calls ${rss_settled} kB with $threads threads" \
  "(echo server: ${echo_rss} kB)"
echo "audit lines: $(wc -l < "$work/audit.log") (two per allowed call: before it runs and after);" \
  "load average at the end: $uptime_load" \
  "on $(nproc) CPUs (other work on the machine skews wall-clock figures)"
par_rate=$(field "$work/brokerd.par" calls_per_s)
par_p99=$(field "$work/brokerd.par" p99_us)
awk -v b="$par_p99" -v e="$(field "$work/echo.par" p99_us)" -v c="$clients" 'BEGIN {
  printf "goal (p99 <= 1.1x the echo server'"'"'s with %d clients): %.2fx, %s\n", c, b / e,
    (b <= 1.1 * e) ? "met" : "NOT met" }'
awk -v r="$par_rate" -v p="$par_p99" -v c="$clients" 'BEGIN {
  printf "goal (>= 10000 calls/s with %d clients, p99 < 1000 us): %s\n", c,
    (r >= 10000 && p < 1000) ? "met" : "NOT met" }'
