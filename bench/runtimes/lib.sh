# SPDX-License-Identifier: Apache-2.0
# What the scripts of bench/runtimes that start brokerd share, sourced after `set -eu`:
#
#   runtimes_brokerd NAME CGROUP   brokerd with $work/NAME.yaml, its log in $work/NAME.log,
#                                  in the cpuacct cgroup CGROUP (empty: none) so that its CPU
#                                  time and its sandboxes' is charged to its side; sets
#                                  $brokerd_pid and waits (10 s) for $work/NAME.sock
#   runtimes_root_binds ROOTFS     $root_binds: a --ro-bind of each top folder of ROOTFS, the
#                                  read-only root as bwrap.so binds it
#   runtimes_tiers                 $work/tiers, the harness that runs the sides, its -lib sides
#                                  through the client library of this build
#   $runtimes_limits               every limit of bwrap.so and gvisor.so on, as option lines of
#                                  a runtime block
#   runtimes_host_mounts SCRIPT ARG...
#                                  with BENCH_HOST_MOUNTS=N (N > 0): runs SCRIPT ARG... again
#                                  in a mount namespace of its own that holds N more mounts
#                                  (small tmpfs), as a host with many file systems has
#                                  (containers, snaps, shares), and exits with its status;
#                                  otherwise returns.  Every side sees the same host
# $build is the build folder, $src the source tree and $work the run's folder.

runtimes_brokerd () {
  sh -c '[ -z "$1" ] || echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$2" \
    "$build/broker/brokerd" --config "$work/$1.yaml" --runtimedir "$build/runtimes/modules" \
    2> "$work/$1.log" &
  brokerd_pid=$!
  i=0
  while [ ! -S "$work/$1.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  [ -S "$work/$1.sock" ] || { cat "$work/$1.log"; exit 1; }
}

runtimes_root_binds () {
  root_binds=
  for d in bin etc lib lib64 root; do
    [ ! -d "$1/$d" ] || root_binds="$root_binds --ro-bind $1/$d /$d"
  done
}

runtimes_tiers () {
  cc -O2 -DBENCH_CLIENT_LIBRARY -I"$src/client/include" -o "$work/tiers" \
    "$src/bench/runtimes/tiers.c" -L"$build/client" -Wl,-rpath,"$build/client" \
    -lboxmaker-client -ljansson
}

# Memory 512m, 128 pids, one CPU, 30 s for each tool, output 256 KiB, files 64 MiB, /tmp 64 MiB.
runtimes_limits="    memory: 512m
    pids: 128
    cpu_percent: 100
    read_file_ms: 30000
    write_file_ms: 30000
    shell_ms: 30000
    http_fetch_ms: 30000
    output_cap: 256k
    file_size: 64m
    tmp_size: 64m"

runtimes_host_mounts () {
  if [ "${BENCH_HOST_MOUNTS:-0}" -gt 0 ] && [ -z "${BX_BENCH_MOUNTS_DIR:-}" ]; then
    BX_BENCH_MOUNTS_DIR=$(mktemp -d /tmp/bx-bench-mounts.XXXXXX)
    export BX_BENCH_MOUNTS_DIR
    status=0
    unshare -m --propagation slave sh -c '
      i=0
      while [ $i -lt "$BENCH_HOST_MOUNTS" ]; do
        mkdir "$BX_BENCH_MOUNTS_DIR/$i" && mount -t tmpfs -o size=64k bench "$BX_BENCH_MOUNTS_DIR/$i" || exit 1
        i=$((i + 1))
      done
      exec "$@"' sh "$@" || status=$?
    rm -rf "$BX_BENCH_MOUNTS_DIR"
    exit $status
  fi
  echo "host: $(wc -l < /proc/self/mountinfo) mounts"
}
