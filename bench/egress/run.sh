#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The egress proxy against a direct loopback connection and against microsocks, in one run:
# bulk throughput (1 GiB each way at once on one connection), connections per second (one
# after the other: connect, handshake, one byte back, close), and the proxy's resident
# memory with 8 connections open.  Every path runs the same client (egress_bench.c); only
# the way in differs (TCP for direct and microsocks, the Unix socket for the proxy).
#
# The proxy runs with the fake Dial (tests/egress/egress_fake_proxy): the system Dial refuses
# loopback, which is not a public address, and the fake sends every connection to the local
# server.  Handshake, copy and serve are the production code.
#
#   bench/egress/run.sh [BUILD_DIR]
# Environment: BX_BENCH_BYTES (bytes each way, default 1 GiB), BX_BENCH_CONNS (default
# 2000), BX_BENCH_RUNS (runs per figure, the median is shown; default 3),
# BX_EGRESS_FAKE_PROXY (an already built egress_fake_proxy; the build is skipped).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/boxmaker-bench-egress}
bytes=${BX_BENCH_BYTES:-1073741824}
count=${BX_BENCH_CONNS:-2000}
runs=${BX_BENCH_RUNS:-3}

command -v microsocks >/dev/null || { echo "microsocks is not installed (apt install microsocks)"; exit 1; }

mkdir -p "$build"
if [ -n "${BX_EGRESS_FAKE_PROXY:-}" ]; then
  proxy_bin=$BX_EGRESS_FAKE_PROXY
else
  echo "building egress_fake_proxy in $build ..."
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBX_TEST_HOOKS=ON >"$build/cmake.log" 2>&1 \
    || { tail -20 "$build/cmake.log"; exit 1; }
  cmake --build "$build" --target egress_fake_proxy -j2 >"$build/build.log" 2>&1 \
    || { tail -20 "$build/build.log"; exit 1; }
  proxy_bin=$(find "$build" -name egress_fake_proxy -type f | head -1)
fi
${CC:-cc} -O2 -Wall -Wextra -D_GNU_SOURCE -pthread "$here/egress_bench.c" -o "$build/egress_bench"
bench=$build/egress_bench

work=$(mktemp -d "${TMPDIR:-/tmp}/bx-bench-egress-XXXXXX")
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

base=$((20000 + $$ % 20000))
sport=$base
mport=$((base + 1))

"$bench" server "$sport" >"$work/server.out" 2>&1 &
pids="$pids $!"
microsocks -i 127.0.0.1 -p "$mport" >/dev/null 2>&1 &
micro_pid=$!
pids="$pids $micro_pid"
# One proxy per copy mode (egress_copy.c); the production default is the first.
modes="poll-splice poll-buffer splice buffer"
for mode in $modes; do
  "$proxy_bin" --socket "$work/$mode.sock" --allow bench.example --target "$sport" \
    --map bench.example=93.184.216.34 --copy "$mode" &
  pids="$pids $!"
  eval "pid_$(echo $mode | tr - _)=\$!"
done
for _ in $(seq 100); do
  if grep -q listening "$work/server.out" && [ -S "$work/poll-splice.sock" ] && [ -S "$work/buffer.sock" ] \
     && "$bench" conns "socks-tcp:$mport:$sport" 1 >/dev/null 2>&1; then
    break
  fi
  sleep 0.1
done

direct="direct:$sport"
micro="socks-tcp:$mport:$sport"
poll_splice="socks-unix:$work/poll-splice.sock:bench.example"
poll_buffer="socks-unix:$work/poll-buffer.sock:bench.example"
splice="socks-unix:$work/splice.sock:bench.example"
buffer="socks-unix:$work/buffer.sock:bench.example"
paths="direct poll_splice poll_buffer splice buffer micro"

# median MODE VIA N: the median of $runs runs
median () {
  for _ in $(seq "$runs"); do "$bench" "$1" "$2" "$3"; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}
rss_kb () { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
label () {
  case $1 in
    direct) echo "direct loopback TCP" ;;
    poll_splice) echo "proxy: poll + splice" ;;
    poll_buffer) echo "proxy: poll + 64 KiB buffer" ;;
    splice) echo "proxy: 2 threads + splice" ;;
    buffer) echo "proxy: 2 threads + buffer" ;;
    micro) echo "microsocks" ;;
  esac
}

echo "egress proxy benchmark: $(( bytes >> 20 )) MiB each way at once, $count connections, median of $runs runs"
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# Interleaved, so a noisy moment hurts all paths alike.
for path in $paths; do
  eval via=\$$path
  eval "bulk_$path=\$(median bulk \"\$via\" \"\$bytes\")"
done
for path in $paths; do
  eval via=\$$path
  eval "conns_$path=\$(median conns \"\$via\" \"\$count\")"
done

printf '%-30s %14s %8s %8s %14s %8s %8s\n' "path" "MB/s each way" "/direct" "/micro" "connections/s" "/direct" "/micro"
for path in $paths; do
  eval b=\$bulk_$path c=\$conns_$path
  printf '%-30s %14s %8s %8s %14s %8s %8s\n' "$(label $path)" "$b" "$(ratio "$b" "$bulk_direct")" \
    "$(ratio "$b" "$bulk_micro")" "$c" "$(ratio "$c" "$conns_direct")" "$(ratio "$c" "$conns_micro")"
done

# Memory: at rest, then with 8 connections open (1 MiB through each first).
echo
rest_proxy=$(rss_kb "$pid_poll_splice")
rest_micro=$(rss_kb "$micro_pid")
mkfifo "$work/hold1" "$work/hold2"
"$bench" hold "$poll_splice" 8 <"$work/hold1" >"$work/hold1.out" &
h1=$!
exec 7>"$work/hold1"
"$bench" hold "$micro" 8 <"$work/hold2" >"$work/hold2.out" &
h2=$!
exec 8>"$work/hold2"
for _ in $(seq 100); do
  grep -q ready "$work/hold1.out" 2>/dev/null && grep -q ready "$work/hold2.out" 2>/dev/null && break
  sleep 0.1
done
held_proxy=$(rss_kb "$pid_poll_splice")
held_micro=$(rss_kb "$micro_pid")
exec 7>&- 8>&-
wait "$h1" "$h2" 2>/dev/null || true
printf '%-30s %10s %16s\n' "resident memory (KiB)" "at rest" "8 connections"
printf '%-30s %10s %16s\n' "proxy: poll + splice" "$rest_proxy" "$held_proxy"
printf '%-30s %10s %16s\n' "microsocks" "$rest_micro" "$held_micro"
