#!/bin/sh
# The brokerd benchmark, in one command (bench/README.md, section brokerd):
#
#   bench/broker/run.sh [BUILD_DIR]
#
# Builds brokerd, fake.so and the two bench programs (Release) in BUILD_DIR (default
# build-bench at the top of the tree), then, in one run:
#   - brokerd with fake.so (mode fixed, no delay) and a read_file grant: read_file calls
#     through the client library, one client at a time and 8 at once;
#   - the same calls against a bare Unix-socket echo server speaking the same frames;
#   - the ratios, and brokerd's resident memory at rest and after 100,000 calls.
# Knobs (environment): BENCH_SEQ (sequential calls, 10000), BENCH_PAR (calls with 8 clients,
# 89000), BENCH_CLIENTS (8).  Warm-up (1000) + SEQ + PAR = the calls before the last RSS.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-bench}
seq_calls=${BENCH_SEQ:-10000}
par_calls=${BENCH_PAR:-89000}
clients=${BENCH_CLIENTS:-8}
warm=1000

echo "building in $build ..."
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target brokerd fake_runtime bx_bench_broker bx_bench_echo -j2 >/dev/null

work=$(mktemp -d /tmp/bx-bench.XXXXXX)
broker_pid=
echo_pid=
cleanup () {
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  [ -n "$echo_pid" ] && kill "$echo_pid" 2>/dev/null && wait "$echo_pid" 2>/dev/null
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkdir -p "$work/data" "$work/home"
echo hello > "$work/data/file"
cat > "$work/brokerd.yaml" <<EOF
socket: $work/broker.sock
home: $work/home
max_connections: 256
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: fixed
    content: hello
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: private
EOF

load="$build/broker/bx_bench_broker"
args="{\"path\":\"$work/data/file\"}"

wait_socket () {
  i=0
  while [ ! -S "$1" ]; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "no socket at $1" >&2; cat "$work/brokerd.err" >&2; exit 1; }
    sleep 0.05
  done
}

rss_kb () {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# bench NAME SOCKET: warm-up, sequential, then CLIENTS at once; leaves the figures in
# $work/NAME.seq and $work/NAME.par.
bench () {
  "$load" "$2" "$warm" "$clients" read_file "$args" >/dev/null
  "$load" "$2" "$seq_calls" 1 read_file "$args" > "$work/$1.seq"
  "$load" "$2" "$par_calls" "$clients" read_file "$args" > "$work/$1.par"
}

field () { # field FILE NAME
  tr ' ' '\n' < "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'
}

"$build/broker/brokerd" --config "$work/brokerd.yaml" --runtimedir "$build/runtimes/modules" \
  2> "$work/brokerd.err" &
broker_pid=$!
wait_socket "$work/broker.sock"
sleep 0.2
rss_rest=$(rss_kb "$broker_pid")

"$build/broker/bx_bench_echo" "$work/echo.sock" &
echo_pid=$!
wait_socket "$work/echo.sock"

bench brokerd "$work/broker.sock"
rss_after=$(rss_kb "$broker_pid")
total=$((warm + $(field "$work/brokerd.seq" calls) + $(field "$work/brokerd.par" calls)))
bench echo "$work/echo.sock"
sleep 1
rss_settled=$(rss_kb "$broker_pid")
echo_rss=$(rss_kb "$echo_pid")

echo
printf '%-8s %-10s %9s %9s %9s %9s %8s\n' server clients calls/s p50_us p99_us max_us failed
for name in brokerd echo; do
  for kind in seq par; do
    f="$work/$name.$kind"
    printf '%-8s %-10s %9s %9s %9s %9s %8s\n' "$name" "$(field "$f" clients)" \
      "$(field "$f" calls_per_s)" "$(field "$f" p50_us)" "$(field "$f" p99_us)" \
      "$(field "$f" max_us)" "$(field "$f" failures)"
  done
done
echo
for kind in seq par; do
  awk -v k="$kind" \
    -v bt="$(field "$work/brokerd.$kind" calls_per_s)" -v et="$(field "$work/echo.$kind" calls_per_s)" \
    -v b50="$(field "$work/brokerd.$kind" p50_us)" -v e50="$(field "$work/echo.$kind" p50_us)" \
    -v b99="$(field "$work/brokerd.$kind" p99_us)" -v e99="$(field "$work/echo.$kind" p99_us)" \
    'BEGIN { printf "ratio brokerd/echo (%s): calls/s %.2f, p50 %.2fx, p99 %.2fx\n", \
             k, bt / et, b50 / e50, b99 / e99 }'
done
echo
echo "brokerd RSS: at rest ${rss_rest} kB, after $total calls ${rss_after} kB," \
  "1 s later ${rss_settled} kB (echo server: ${echo_rss} kB)"
echo "audit lines: $(wc -l < "$work/audit.log")"
par_rate=$(field "$work/brokerd.par" calls_per_s)
par_p99=$(field "$work/brokerd.par" p99_us)
awk -v r="$par_rate" -v p="$par_p99" -v c="$clients" 'BEGIN {
  printf "goal (>= 10000 calls/s with %d clients, p99 < 1000 us): %s\n", c,
    (r >= 10000 && p < 1000) ? "met" : "NOT met" }'
