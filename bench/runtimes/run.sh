#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh: what a call through brokerd costs over the floors it stands on, tool by tool
# (read_file, write_file, shell), in alternating rounds:
#   fork+exec     toolkit started directly as the sandbox's uid: the physical floor
#   bare-bwrap    bubblewrap running toolkit with the least that gives bwrap.so's isolation
#                 (every namespace, the same read-only root, the grant bound), no helper
#                 program, no limits, no seccomp filter
#   bwrap.so      `boxmaker call` -> brokerd -> bwrap.so, all limits on
#   runsc-do      `runsc do` of toolkit (when runsc is installed): gVisor's floor
#   gvisor.so     `boxmaker call` -> brokerd -> gvisor.so, all limits on
#   podman.so     `boxmaker call` -> brokerd -> podman.so (when podman is installed and
#                 BENCH_PODMAN is not 0), the same limits
#   bwrap.so-pool bwrap.so with sandboxes made ahead of their calls (its option pool,
#                 BENCH_POOL sandboxes, 2 by default), a brokerd per tool: its CPU time per
#                 call is its brokerd's over the whole run shared out, so it includes making
#                 the sandbox that replaces the one each call took, done after the answer
#   bwrap.so-lib  bwrap.so's brokerd called through the client library from this process,
#                 as a front end that already runs (boxmaker mcp) calls it: no client
#                 program started per call
#   bwrap.so-pool-lib  the same for a pool (a brokerd of its own per tool)
#   bwrap.so-ro0  bwrap.so again, its grant with `readonly: []` (write_file and shell only):
#                 against bwrap.so, what the default protected paths cost
#   bwrap.so-pool-lib-ro0  the same for bwrap.so-pool-lib (a brokerd of its own per tool)
#   gvisor.so-ro0 the same for gvisor.so
# For each side: p50 and p90 of the wall time, and the CPU time per call: the side's program
# and every descendant of it (a cgroup v1 cpuacct cgroup of the side's), brokerd's and its
# sandboxes' included (brokerd's cgroup); then the ratios to the floors, brokerd's
# resident memory with bwrap.so and 8 callers at once, and what the pool costs at rest
# (its sandboxes' memory, and the CPU time of its brokerd over 10 idle seconds).  Goals: bwrap.so p50 <= 10 ms,
# <= 1.5x bare bwrap and >= 15x faster than podman.so; gvisor.so <= 1.2x runsc do.
#
#   bench/runtimes/run.sh BUILD_DIR [ROUNDS]       # default 30; BENCH_IDLE_MS: sleep
#                                                  # before each call (cold starts);
#                                                  # BENCH_GVISOR=0, BENCH_PODMAN=0: without;
#                                                  # BENCH_HOST_MOUNTS=N: N more host mounts
#
# BUILD_DIR holds a build of this tree (brokerd, boxmaker, toolkit, bwrap.so, gvisor.so,
# podman.so).  As root on this kind of host (cgroup v1, runc).  Builds a read-only root and,
# for podman.so, the tools image (localhost/boxmaker-tools-bench-rt), both removed
# afterwards.
# http_fetch has a benchmark of its own (http_fetch.sh): it needs a served HTTPS host, and
# its floor is two sandboxes, the egress proxy's and the tool's.
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-30}
idle_ms=${BENCH_IDLE_MS:-0}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/bench/runtimes/lib.sh"
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (cgroups, the sandbox's uid)" >&2; exit 1; }
runtimes_host_mounts "$0" "$@"
bwrap=$(command -v bwrap) || { echo "run.sh: bubblewrap is not installed" >&2; exit 1; }
runsc=
[ "${BENCH_GVISOR:-1}" = 0 ] || runsc=$(command -v runsc || true)
podman=
[ "${BENCH_PODMAN:-1}" = 0 ] || podman=$(command -v podman || true)
work=$(mktemp -d /tmp/bx-bench-runtimes.XXXXXX)
chmod 0755 "$work"
acct=/sys/fs/cgroup/cpuacct
[ -f "$acct/cpuacct.usage" ] || acct=
bench_pids=
cleanup () {
  for p in $bench_pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # By name, not by id: the same files make the same image, which may also carry another
  # name (the tools image someone built from the same toolkit); that one must stay.
  [ -z "$podman" ] || for ref in $(podman images --filter reference=localhost/boxmaker-tools-bench-rt \
                 --format '{{.Repository}}:{{.Tag}}'); do
    podman rmi "$ref" >/dev/null 2>&1 || true
  done
  [ -z "$acct" ] || for c in "$acct"/bx-bench-*-$$; do rmdir "$c" 2>/dev/null || true; done
  # The parent runsc made for gvisor.so's sandboxes (each removed with its sandbox).
  for c in /sys/fs/cgroup/*/boxmaker-bench-gvisor-$$ /sys/fs/cgroup/boxmaker-bench-gvisor-$$ \
           /sys/fs/cgroup/*/boxmaker-bench-gvisor-ro0-$$ /sys/fs/cgroup/boxmaker-bench-gvisor-ro0-$$; do
    rmdir "$c" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
# A signal (a reader that went away, ^C) ends the run through the cleanup as well.
trap 'exit 1' HUP INT PIPE TERM

# tiers makes the -lib sides' calls itself, through the client library of this build.
runtimes_tiers
"$src/packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
  --toolkit "$build/toolkit/toolkit" > /dev/null
[ -z "$podman" ] || image=$("$src/packaging/image/build-image.sh" --quiet \
  --toolkit "$build/toolkit/toolkit" --name localhost/boxmaker-tools-bench-rt | tail -n 1)
mkdir -p "$work/grant" "$work/home" "$work/egress" "$work/check"
echo "a line to read" > "$work/grant/file.txt"
# Written by every side, whose uids differ (65534; gvisor.so's sandboxes 201000).
: > "$work/grant/w.txt"
chmod 0666 "$work/grant/w.txt"
chmod 0777 "$work/grant"
g=$work/grant
# The arguments go on boxmaker's command line, which tiers splits at spaces: a space in
# JSON is written \u0020.
printf '%s' "{\"path\":\"$g/file.txt\"}" > "$work/read_file.json"
printf '%s' "{\"path\":\"$g/w.txt\",\"content\":\"written\"}" > "$work/write_file.json"
printf '%s' "{\"command\":\"echo\\u0020hi\",\"cwd\":\"$g\"}" > "$work/shell.json"

# start_brokerd NAME RUNTIME_BLOCK [GRANT_LINE]: in a cpuacct cgroup of its own, so that its
# CPU time and its sandboxes' (bwrap.so's keepers fork them) is charged to its side.
start_brokerd () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
runtime:
$2
grants:
  - tools: [read_file, write_file, shell]
    paths: [$g]
    class: private
${3:-}
YAML
  cg=
  if [ -n "$acct" ]; then
    cg=$acct/bx-bench-$1-$$
    mkdir "$cg"
  fi
  runtimes_brokerd "$1" "$cg"
  eval "${1}_pid=\$brokerd_pid"
  bench_pids="$bench_pids $brokerd_pid"
}
# Every limit on in the modules (lib.sh).
limits=$runtimes_limits
start_brokerd bwrap "  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
$limits"
for pool in bwrap_pool_read_file bwrap_pool_write_file bwrap_pool_shell \
            bwrap_pool_lib_read_file bwrap_pool_lib_write_file bwrap_pool_lib_shell; do
  start_brokerd "$pool" "  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    pool: ${BENCH_POOL:-2}
$limits"
done
# The same module with no protected path in the grant: the default ones' cost.
start_brokerd bwrap_ro0 "  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
$limits" "    readonly: []"
# And with a pool, where the protected paths are mounted by the sandbox's mounter.
for pool in bwrap_pool_lib_ro0_write_file bwrap_pool_lib_ro0_shell; do
  start_brokerd "$pool" "  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    pool: ${BENCH_POOL:-2}
$limits" "    readonly: []"
done
if [ -n "$runsc" ]; then
  start_brokerd gvisor "  module: gvisor
  options:
    rootfs: $work/rootfs
    state_dir: $work/gvisor-state
    cgroup_path: /boxmaker-bench-gvisor-$$
$limits"
  start_brokerd gvisor_ro0 "  module: gvisor
  options:
    rootfs: $work/rootfs
    state_dir: $work/gvisor-state-ro0
    cgroup_path: /boxmaker-bench-gvisor-ro0-$$
$limits" "    readonly: []"
fi
if [ -n "$podman" ]; then
  start_brokerd podman "  module: podman
  options:
    image: $image
    memory: 512m
    pids: 128
    read_file_ms: 30000
    write_file_ms: 30000
    shell_ms: 30000
    output_cap: 256k
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never, --cpus=1]"
fi

# The read-only root as bwrap.so binds it: each top folder of the root it has.
runtimes_root_binds "$work/rootfs"
# The cpuacct.usage files of a brokerd side: its own cgroup's, and for gvisor.so the parent
# cgroup runsc puts the sandboxes in.
bwrap_cpu=- bwrap_ro0_cpu=- gvisor_cpu=- gvisor_ro0_cpu=- podman_cpu=-
if [ -n "$acct" ]; then
  bwrap_cpu=$acct/bx-bench-bwrap-$$/cpuacct.usage
  bwrap_ro0_cpu=$acct/bx-bench-bwrap_ro0-$$/cpuacct.usage
  # podman's containers are not brokerd's children: conmon and runc's processes sit in
  # cgroups of their own, so podman.so's figure is brokerd's and podman's own process.
  podman_cpu=$acct/bx-bench-podman-$$/cpuacct.usage
  gvisor_cpu=$acct/bx-bench-gvisor-$$/cpuacct.usage,$acct/boxmaker-bench-gvisor-$$/cpuacct.usage
  gvisor_ro0_cpu=$acct/bx-bench-gvisor_ro0-$$/cpuacct.usage,$acct/boxmaker-bench-gvisor-ro0-$$/cpuacct.usage
fi
sides=$work/sides
: > "$sides"
for tool in read_file write_file shell; do
  in=$work/$tool.json
  bind=--bind
  [ "$tool" != read_file ] || bind=--ro-bind
  {
    printf '%s\tfork+exec\t65534\t%s\t-\t%s %s\n' "$tool" "$in" "$build/toolkit/toolkit" "$tool"
    printf '%s\tbare-bwrap\t65534\t%s\t-\t%s --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent --clearenv --setenv PATH /bin%s --proc /proc --dev /dev --tmpfs /tmp %s %s %s --remount-ro / --chdir /tmp -- /bin/toolkit %s\n' \
      "$tool" "$in" "$bwrap" "$root_binds" "$bind" "$g" "$g" "$tool"
    printf '%s\tbwrap.so\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
      "$tool" "$in" "$bwrap_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/bwrap.sock"
    pool_cpu=-
    [ -z "$acct" ] || pool_cpu="=$acct/bx-bench-bwrap_pool_$tool-$$/cpuacct.usage"
    printf '%s\tbwrap.so-pool\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
      "$tool" "$in" "$pool_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/bwrap_pool_$tool.sock"
    printf '%s\tbwrap.so-lib\t-1\t%s\t%s\t@call %s %s\n' "$tool" "$in" "$bwrap_cpu" "$work/bwrap.sock" "$tool"
    pool_cpu=-
    [ -z "$acct" ] || pool_cpu="=$acct/bx-bench-bwrap_pool_lib_$tool-$$/cpuacct.usage"
    printf '%s\tbwrap.so-pool-lib\t-1\t%s\t%s\t@call %s %s\n' \
      "$tool" "$in" "$pool_cpu" "$work/bwrap_pool_lib_$tool.sock" "$tool"
    [ "$tool" = read_file ] || printf '%s\tbwrap.so-ro0\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
      "$tool" "$in" "$bwrap_ro0_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/bwrap_ro0.sock"
    if [ "$tool" != read_file ]; then
      pool_cpu=-
      [ -z "$acct" ] || pool_cpu="=$acct/bx-bench-bwrap_pool_lib_ro0_$tool-$$/cpuacct.usage"
      printf '%s\tbwrap.so-pool-lib-ro0\t-1\t%s\t%s\t@call %s %s\n' \
        "$tool" "$in" "$pool_cpu" "$work/bwrap_pool_lib_ro0_$tool.sock" "$tool"
    fi
    if [ -n "$runsc" ]; then
      # runsc do: the host's root read-only under an overlay, no network, the same platform.
      printf '%s\trunsc-do\t-1\t%s\t-\t%s --root %s --platform=ptrace --network=none do -quiet -cwd / %s %s\n' \
        "$tool" "$in" "$runsc" "$work/runsc-do" "$build/toolkit/toolkit" "$tool"
      printf '%s\tgvisor.so\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
        "$tool" "$in" "$gvisor_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/gvisor.sock"
      [ "$tool" = read_file ] || printf '%s\tgvisor.so-ro0\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
        "$tool" "$in" "$gvisor_ro0_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/gvisor_ro0.sock"
    fi
    [ -z "$podman" ] || printf '%s\tpodman.so\t-1\t%s\t%s\t%s call %s %s --socket %s --session bench\n' \
      "$tool" "$in" "$podman_cpu" "$build/client/boxmaker" "$tool" "$(cat "$in")" "$work/podman.sock"
  } >> "$sides"
done
printf 'RATIO\tbwrap.so\tbwrap.so-ro0\nRATIO\tbwrap.so-pool-lib\tbwrap.so-pool-lib-ro0\n' >> "$sides"
printf 'RATIO\tbwrap.so-pool\tbare-bwrap\nRATIO\tbwrap.so-pool\tfork+exec\nRATIO\tbwrap.so-pool\tbwrap.so\n' >> "$sides"
printf 'RATIO\tbwrap.so-pool-lib\tbare-bwrap\nRATIO\tbwrap.so-pool-lib\tfork+exec\n' >> "$sides"
printf 'RATIO\tbwrap.so-lib\tbare-bwrap\nRATIO\tbwrap.so-lib\tfork+exec\n' >> "$sides"
printf 'RATIO\tbwrap.so\tbare-bwrap\nRATIO\tbwrap.so\tfork+exec\nRATIO\tbare-bwrap\tfork+exec\n' >> "$sides"
printf 'RATIO\tgvisor.so\trunsc-do\nRATIO\tgvisor.so-ro0\trunsc-do\nRATIO\tgvisor.so\tgvisor.so-ro0\n' >> "$sides"
printf 'RATIO\tgvisor.so\tfork+exec\nRATIO\tgvisor.so\tbwrap.so\n' >> "$sides"
printf 'RATIO\tpodman.so\tbwrap.so\nRATIO\tpodman.so\tgvisor.so\n' >> "$sides"

# Once each, the outputs compared (the first gvisor.so call also makes runsc's parent cgroup,
# whose usage the timed calls read).
if [ -n "$acct" ] && [ -n "$runsc" ]; then
  for s in gvisor gvisor_ro0; do
    "$build/client/boxmaker" call read_file "$(cat "$work/read_file.json")" \
      --socket "$work/$s.sock" --session bench > /dev/null 2>&1
  done
fi
"$work/tiers" "$sides" 1 0 "$work/check" || { echo "a side failed"; exit 1; }
for tool in read_file write_file shell; do
  for f in "$work/check/$tool".*; do
    case $f in *.err) continue ;; esac
    cmp -s "$work/check/$tool.fork+exec" "$f" \
      || echo "note: $tool: ${f##*/} prints other bytes than fork+exec: $(head -c 200 "$f" | tr '\n' ' ')"
  done
done

uptime
echo "$rounds rounds, sides alternating, ${idle_ms} ms idle before each call; wall time in ms, CPU ms per call (mean)"
[ -n "$acct" ] || echo "note: no cgroup v1 cpuacct: brokerd's and its sandboxes' CPU time is not counted"
"$work/tiers" "$sides" "$rounds" "$idle_ms"

rss () { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
rest=$(rss "$bwrap_pid" VmRSS)
args=$(cat "$work/read_file.json")
callers=
for c in 1 2 3 4 5 6 7 8; do
  ( for i in $(seq 25); do
      "$build/client/boxmaker" call read_file "$args" --socket "$work/bwrap.sock" \
        --session bench --call "p$c-$i" > /dev/null 2>&1 || echo fail
    done ) > "$work/par$c" &
  callers="$callers $!"
done
peak=0
while kill -0 $callers 2>/dev/null; do
  now_rss=$(rss "$bwrap_pid" VmRSS)
  [ "$now_rss" -gt "$peak" ] && peak=$now_rss
  sleep 0.05
done
wait $callers 2>/dev/null || true
failed=$(cat "$work"/par* | grep -c fail || true)
after=$(rss "$bwrap_pid" VmRSS)
echo "brokerd with bwrap.so: VmRSS ${rest} kB at rest, peak ${peak} kB with 8 callers at once (200 calls, $failed failed), ${after} kB after"

# The pool at rest: the memory its sandboxes hold (the slots' memory cgroups, v1, against
# those of the brokerd without a pool, whose slots hold only their keepers) and the CPU time
# its brokerd spends while no call comes.
slots_kb () {
  kb=0
  for u in /sys/fs/cgroup/memory/boxmaker-bwrap/"$1"-*/*/memory.usage_in_bytes; do
    [ -f "$u" ] || continue
    kb=$((kb + $(cat "$u") / 1024))
  done
  echo "$kb"
}
sleep 1
idle=
if [ -n "$acct" ]; then
  u=$acct/bx-bench-bwrap_pool_read_file-$$/cpuacct.usage
  before=$(cat "$u")
  sleep 10
  idle=", $(( ($(cat "$u") - before) / 1000000 )) ms of CPU in 10 s at rest"
fi
echo "bwrap.so's pool of ${BENCH_POOL:-2}: its slots hold $(slots_kb "$bwrap_pool_read_file_pid") kB (without a pool: $(slots_kb "$bwrap_pid") kB)$idle; its brokerd's VmRSS $(rss "$bwrap_pool_read_file_pid" VmRSS) kB"
