# SPDX-License-Identifier: Apache-2.0
# What the benchmarks that run brokerd with fake.so share, sourced after `set -eu`:
#
#   bench_build BUILD_DIR TARGET...     a Release build of those targets (no tests)
#   bench_workdir NAME                  $work, a fresh folder removed at exit with brokerd
#                                       (kept when BENCH_KEEP is set)
#   bench_fake_config FILE MAX_CONN [EXTRA_TOP_LEVEL [EXTRA_GRANTS]]
#                                       brokerd's config: fake.so (mode fixed, no delay), a
#                                       read_file grant on $work/data, the audit in $work
#   bench_start_brokerd BUILD_DIR CONFIG SOCKET
#                                       starts brokerd ($broker_pid) and waits for SOCKET
#   wait_socket PATH                    until PATH is a socket (5 s), else brokerd's log
#   cpu_ticks PID                       user + system time of a process, in clock ticks
#   field FILE NAME                     NAME's value in a line of NAME=VALUE words

bench_build () {
  bench_build_dir=$1
  shift
  echo "building in $bench_build_dir ..."
  cmake -S "$top" -B "$bench_build_dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$bench_build_dir" --target "$@" -j2 >/dev/null
}

broker_pid=
bench_stop_brokerd () {
  set +e # a killed server's status must not stop the cleanup half-way
  [ -z "$broker_pid" ] || { kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null; }
  broker_pid=
}

bench_workdir () {
  work=$(mktemp -d "/tmp/bx-bench-$1.XXXXXX")
  mkdir -p "$work/data" "$work/home"
  echo hello > "$work/data/file"
  trap 'bench_cleanup' EXIT INT TERM
}

# A script adds its own servers to stop with BENCH_MORE_PIDS.
BENCH_MORE_PIDS=
bench_cleanup () {
  set +e
  for p in $BENCH_MORE_PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  bench_stop_brokerd
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}

bench_fake_config () {
  cat > "$1" <<YAML
socket: $work/broker.sock
home: $work/home
max_connections: $2
audit: $work/audit.log
${3:-}
runtime:
  module: fake
  options:
    mode: fixed
    content: hello
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: private
${4:-}
YAML
}

wait_socket () {
  i=0
  while [ ! -S "$1" ]; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "no socket at $1" >&2; cat "$work/brokerd.err" >&2; exit 1; }
    sleep 0.05
  done
}

bench_start_brokerd () {
  "$1/broker/brokerd" --config "$2" --runtimedir "$1/runtimes/modules" 2> "$work/brokerd.err" &
  broker_pid=$!
  wait_socket "$3"
}

cpu_ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

field () { tr ' ' '\n' < "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# bench_load NAME SOCKET PID CALLS CLIENTS OUT: with $load and $args, CALLS calls from
# CLIENTS at once; leaves the load generator's line in OUT with the server's CPU time per
# call appended (server_cpu_us, from /proc/PID/stat: less noisy than wall time on a shared
# machine).
bench_load () {
  t0=$(cpu_ticks "$3")
  "$load" "$2" "$4" "$5" read_file "$args" > "$6.tmp"
  t1=$(cpu_ticks "$3")
  awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$4" \
    'BEGIN { printf " server_cpu_us=%.1f\n", t * 1e6 / hz / n }' >> "$6.tmp"
  tr -d '\n' < "$6.tmp" > "$6" && rm "$6.tmp"
}

# bench_measure NAME SOCKET PID: with $load and $args, 1,000 calls to warm up, then
# $seq_calls from one client and $par_calls from $clients at once; leaves the load
# generator's figures in $work/NAME.seq and $work/NAME.par (bench_load).
bench_measure () {
  "$load" "$2" 1000 "$clients" read_file "$args" >/dev/null
  bench_load "$1" "$2" "$3" "$seq_calls" 1 "$work/$1.seq"
  bench_load "$1" "$2" "$3" "$par_calls" "$clients" "$work/$1.par"
}
