#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The egress proxy against a direct loopback connection and against microsocks: bulk
# throughput (BYTES each way at once on one connection) and connections per second (one after
# the other: connect, handshake, one byte back, close), in alternating rounds (each round runs
# every path once, a different path first each round, so a noisy moment on this shared machine
# hurts all paths alike), then the proxy's resident memory with 8 connections open.  Every
# path runs the same client (egress_bench.c); only the way in differs (TCP for direct and
# microsocks, the Unix socket for the proxy).  Beside each figure: the CPU time of client,
# server and whatever sits between them, per MiB each way or per connection, and the middle's
# share alone; CPU time moves far less with the machine's load than wall time does.
#
# The proxy runs with the fake Dial (tests/egress/egress_fake_proxy): the system Dial refuses
# loopback, which is not a public address, and the fake sends every connection to the local
# server.  Handshake, copy and serve are the production code.
#
#   bench/egress/run.sh [BUILD_DIR]
# Environment: BX_BENCH_BYTES (bytes each way, default 512 MiB), BX_BENCH_CONNS (connections
# per run, default 2000), BX_BENCH_ROUNDS (default 9; each figure is the median over the
# rounds, each ratio the median of the rounds' ratios), BX_BENCH_ALL_MODES=1 (also the three
# other copy modes of egress_copy.c), BX_EGRESS_FAKE_PROXY (an already built
# egress_fake_proxy; the build is skipped).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/boxmaker-bench-egress}
bytes=${BX_BENCH_BYTES:-536870912}
count=${BX_BENCH_CONNS:-2000}
rounds=${BX_BENCH_ROUNDS:-9}

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

# Below the kernel's range of ephemeral ports (32768 and up by default): a run's thousands of
# connections leave ports there in TIME_WAIT, which the next run's server could not bind.
base=$((20000 + $$ % 12000))
sport=$base
mport=$((base + 1))

"$bench" server "$sport" >"$work/server.out" 2>&1 &
srv_pid=$!
pids="$pids $srv_pid"
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
# A port someone holds stops the server or microsocks at once: say so, not a failed round.
kill -0 "$srv_pid" 2>/dev/null && kill -0 "$micro_pid" 2>/dev/null \
  || { cat "$work/server.out" >&2; echo "egress bench: the server or microsocks did not start (ports $sport, $mport)" >&2; exit 1; }

direct="direct:$sport"
micro="socks-tcp:$mport:$sport"
poll_splice="socks-unix:$work/poll-splice.sock:bench.example"
poll_buffer="socks-unix:$work/poll-buffer.sock:bench.example"
splice="socks-unix:$work/splice.sock:bench.example"
buffer="socks-unix:$work/buffer.sock:bench.example"
paths="direct poll_splice micro"
[ "${BX_BENCH_ALL_MODES:-0}" = 1 ] && paths="direct poll_splice poll_buffer splice buffer micro"
pid_direct=
pid_micro=$micro_pid

rss_kb () { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
# CPU seconds of a process so far (all its threads, user and system).
cpu_of () {
  [ -n "$1" ] || { echo 0; return; }
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
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

# run KIND PATH N: one run, one line in results: KIND ROUND PATH FIGURE CPU_ALL CPU_MIDDLE
# (CPU in seconds for the whole run: client + server + middle, and the middle alone).
run () {
  eval via=\$$2 mid=\$pid_$2
  s0=$(cpu_of "$srv_pid") m0=$(cpu_of "$mid")
  out=$("$bench" "$1" "$via" "$3")
  s1=$(cpu_of "$srv_pid") m1=$(cpu_of "$mid")
  echo "$1 $round $2 $out $s0 $s1 $m0 $m1" | awk '{ print $1, $2, $3, $4, $5 + ($7 - $6) + ($9 - $8), $9 - $8 }' >>"$work/results"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "egress proxy benchmark: $(( bytes >> 20 )) MiB each way at once, $count connections, $rounds alternating rounds"
echo "machine: $(nproc) cores, $(uname -sr), load at the start $load0"
: >"$work/results"
npaths=$(echo $paths | wc -w)
for round in $(seq "$rounds"); do
  # Rotate the order: each round starts with the next path.
  order=$(echo $paths | awk -v s=$(( (round - 1) % npaths )) '{ for (i = 0; i < NF; i++) printf "%s ", $((i + s) % NF + 1) }')
  for path in $order; do run bulk "$path" "$bytes"; done
  for path in $order; do run conns "$path" "$count"; done
  cut -d' ' -f1-3 /proc/loadavg | awk '{ print $1 }' >>"$work/loads"
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg); 1-minute load after each round: $(sort -n "$work/loads" | head -1) to $(sort -n "$work/loads" | tail -1)"
echo

# The table: medians over the rounds; ratios are the medians of each round's ratio.
labels=
for path in $paths; do labels="$labels$path=$(label $path | tr ' ' '_');"; done
awk -v bytes="$bytes" -v count="$count" -v paths="$paths" -v labels="$labels" '
function median(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return n == 0 ? 0 : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
}
{ fig[$1, $2, $3] = $4; all[$1, $3] = all[$1, $3] " " $4; cpu[$1, $3] = cpu[$1, $3] " " $5; mcpu[$1, $3] = mcpu[$1, $3] " " $6; round[$2] = 1 }
END {
  n = split(labels, l, ";"); for (i = 1; i <= n; i++) { split(l[i], kv, "="); gsub(/_/, " ", kv[2]); name[kv[1]] = kv[2] }
  np = split(paths, p, " ")
  mib = bytes / 1048576
  printf "%-28s %9s %7s %7s %11s %10s | %8s %7s %7s %11s %10s\n", "path", "MB/s", "/direct", "/micro", "CPU ms/MiB", "middle", "conn/s", "/direct", "/micro", "CPU us/conn", "middle"
  for (i = 1; i <= np; i++) {
    x = p[i]; line = sprintf("%-28s", name[x])
    split("bulk conns", kinds, " ")
    for (k = 1; k <= 2; k++) {
      kind = kinds[k]; rd = ""; rm = ""
      for (r in round) {
        if (fig[kind, r, "direct"] > 0) rd = rd " " fig[kind, r, x] / fig[kind, r, "direct"]
        if (fig[kind, r, "micro"] > 0) rm = rm " " fig[kind, r, x] / fig[kind, r, "micro"]
      }
      scale = kind == "bulk" ? 1000 / mib : 1e6 / count
      line = line sprintf(" %9.0f %7.2f %7.2f %11.2f %10.2f", median(all[kind, x]), median(rd), median(rm), median(cpu[kind, x]) * scale, median(mcpu[kind, x]) * scale)
      if (k == 1) line = line " |"
    }
    print line
  }
}' "$work/results"
echo "(medians of $rounds rounds; ratios: the medians of each round's ratio; CPU: client, server and middle together, then the middle alone: the proxy or microsocks)"
[ -n "${BX_BENCH_KEEP:-}" ] && cp "$work/results" "$BX_BENCH_KEEP"

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
