#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# concurrency.sh: shell calls from N clients at once (N = 1, 4, 16, 64 by default), through
# `boxmaker call` -> brokerd -> bwrap.so (every limit on, the default connection limits and
# queue), without a pool (bwrap.so) and with `pool: 2` (bwrap.so-pool, sandboxes made ahead),
# against bare bubblewrap with the least options that give bwrap.so's isolation (the
# bare-bwrap side of run.sh), in alternating rounds.  Per N and side: calls/s, calls lost
# (must be 0), p50 and p99 of a call's wall time and the CPU time per call (brokerd's and
# its sandboxes' included, those made ahead too, cgroup v1 cpuacct); then each bwrap.so
# side's ratios to bare bwrap.  Goal: a throughput of at least 0.8x bare bubblewrap's at
# each N.
#
#   bench/runtimes/concurrency.sh BUILD_DIR [ROUNDS [CALLS [N...]]]
#                                 # defaults: 3 rounds, 256 calls per side and round (at
#                                 # least 8 per client), N = 1 4 16 64; BENCH_HOST_MOUNTS=N:
#                                 # N more host mounts (lib.sh)
#
# BUILD_DIR holds a build of this tree (brokerd, boxmaker, toolkit, bwrap.so).  As root.
# Builds a read-only root in a temporary folder, removed afterwards.
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-3}
calls=${3:-256}
[ $# -gt 3 ] && { shift 3; clients="$*"; } || clients="1 4 16 64"
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/bench/runtimes/lib.sh"
[ "$(id -u)" = 0 ] || { echo "concurrency.sh: needs root (cgroups, the sandbox's uid)" >&2; exit 1; }
# shellcheck disable=SC2086 # one argument per N
runtimes_host_mounts "$0" "$build" "$rounds" "$calls" $clients
bwrap=$(command -v bwrap) || { echo "concurrency.sh: bubblewrap is not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/bx-bench-concurrency.XXXXXX)
chmod 0755 "$work"
acct=/sys/fs/cgroup/cpuacct
[ -f "$acct/cpuacct.usage" ] || acct=
broker_pids=
cleanup () {
  for p in $broker_pids; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -z "$acct" ] || rmdir "$acct/bx-bench-concurrency-$$"-* 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT PIPE TERM

cc -O2 -pthread -o "$work/concurrency" "$src/bench/runtimes/concurrency.c"
"$src/packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
  --toolkit "$build/toolkit/toolkit" > /dev/null
g=$work/grant
mkdir -p "$g"
chmod 0777 "$g"
# boxmaker's command line is split at spaces by the harness: a space in JSON is \u0020.
printf '%s' "{\"command\":\"echo\\u0020hi\",\"cwd\":\"$g\"}" > "$work/shell.json"

# brokerd NAME POOL: a brokerd on $work/NAME.sock with bwrap.so's option pool POOL, in a
# cpuacct cgroup of its own (its CPU time and its sandboxes' is the side's); sets $cpu_files.
brokerd () {
  mkdir -p "$work/home-$1" "$work/egress-$1"
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home-$1
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress-$1
    pool: $2
$runtimes_limits
grants:
  - tools: [shell]
    paths: [$g]
    class: private
YAML
  cg=
  cpu_files=-
  if [ -n "$acct" ]; then
    cg=$acct/bx-bench-concurrency-$$-$1
    mkdir "$cg"
    cpu_files=$cg/cpuacct.usage
  fi
  runtimes_brokerd "$1" "$cg"
  broker_pids="$broker_pids $brokerd_pid"
}
brokerd b 0
b_cpu=$cpu_files
brokerd p 2
p_cpu=$cpu_files

runtimes_root_binds "$work/rootfs"
in=$work/shell.json
{
  printf 'shell\tbare-bwrap\t65534\t%s\t-\t%s --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent --clearenv --setenv PATH /bin%s --proc /proc --dev /dev --tmpfs /tmp --bind %s %s --remount-ro / --chdir /tmp -- /bin/toolkit shell\n' \
    "$in" "$bwrap" "$root_binds" "$g" "$g"
  for side in "bwrap.so b $b_cpu" "bwrap.so-pool p $p_cpu"; do
    set -- $side
    printf 'shell\t%s\t-1\t%s\t%s\t%s call shell %s --socket %s --session bench\n' \
      "$1" "$in" "$3" "$build/client/boxmaker" "$(cat "$in")" "$work/$2.sock"
  done
} > "$work/sides"

uptime
echo "$rounds rounds of $calls calls per side (at least 8 per client), sides alternating; wall time in ms"
[ -n "$acct" ] || echo "note: no cgroup v1 cpuacct: brokerd's and its sandboxes' CPU time is not counted"
# shellcheck disable=SC2086 # one argument per N
status=0
"$work/concurrency" "$work/sides" "$rounds" "$calls" $clients || status=$?
for b in b p; do
  busy=$(grep -c '"reason":"brokerd is busy"' "$work/$b.log" || true)
  echo "brokerd $b refused $busy connection(s) as busy"
done
exit $status
