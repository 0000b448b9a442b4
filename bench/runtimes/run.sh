#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh: a read_file call end to end through brokerd with bwrap.so, through brokerd with
# podman.so, through brokerd with gvisor.so, a bare `bwrap` of the same sandbox and a bare
# `runsc do` of the same command, alternating in one run, all limits on; prints medians and
# ratios, warm (back to back) and cold (each after 1 s idle), and brokerd's resident memory
# with bwrap.so and 8 callers at once.
# Goals: bwrap.so p50 <= 10 ms, >= 15x faster than podman.so, <= 1.5x bare bwrap;
# gvisor.so <= 1.2x bare runsc do, >= 1.5x faster than podman.so.
#
#   bench/runtimes/run.sh BUILD_DIR [WARM_ROUNDS] [COLD_ROUNDS]
#
# BUILD_DIR holds a build of this tree (brokerd, boxmaker, toolkit, bwrap.so, podman.so,
# gvisor.so); runsc from Debian's package runsc.
# As root on this kind of host (cgroup v1, runc).  Builds a read-only root and the tools
# image (localhost/boxmaker-tools-bench-rt), both removed afterwards.
set -eu
build=$(cd "$1" && pwd)
warm_rounds=${2:-30}
cold_rounds=${3:-8}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/bx-bench-runtimes.XXXXXX)
chmod 0755 "$work"
bench_pids=
cgroups=
cleanup () {
  for p in $bench_pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # By name, not by id: the same files make the same image, which may also carry another
  # name (the tools image someone built from the same toolkit); that one must stay.
  for ref in $(podman images --filter reference=localhost/boxmaker-tools-bench-rt \
                 --format '{{.Repository}}:{{.Tag}}'); do
    podman rmi "$ref" >/dev/null 2>&1 || true
  done
  for c in $cgroups; do rmdir "$c" 2>/dev/null || true; done
  # The parent runsc made for gvisor.so's sandboxes (each removed with its sandbox).
  for c in /sys/fs/cgroup/*/boxmaker-bench-gvisor-$$ /sys/fs/cgroup/boxmaker-bench-gvisor-$$; do
    rmdir "$c" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

"$src/packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
  --toolkit "$build/toolkit/toolkit" > /dev/null
image=$("$src/packaging/image/build-image.sh" --quiet --toolkit "$build/toolkit/toolkit" \
          --name localhost/boxmaker-tools-bench-rt | tail -n 1)
mkdir -p "$work/grant" "$work/home" "$work/egress"
echo "a line to read" > "$work/grant/file.txt"

start_brokerd () { # name, runtime block
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
runtime:
$2
grants:
  - tools: [read_file]
    paths: [$work/grant]
    class: private
YAML
  "$build/broker/brokerd" --config "$work/$1.yaml" --runtimedir "$build/runtimes/modules" \
    2> "$work/$1.log" &
  eval "${1}_pid=\$!"
  bench_pids="$bench_pids $!"
  i=0
  while [ ! -S "$work/$1.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  [ -S "$work/$1.sock" ] || { cat "$work/$1.log"; exit 1; }
}
# Every limit on, the same values on every side: memory 512m, 128 pids, one CPU, 30 s,
# output 256 KiB, files 64 MiB, /tmp 64 MiB.
start_brokerd bwrap "  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    memory: 512m
    pids: 128
    cpu_percent: 100
    read_file_ms: 30000
    output_cap: 256k
    file_size: 64m
    tmp_size: 64m"
start_brokerd podman "  module: podman
  options:
    image: $image
    memory: 512m
    pids: 128
    read_file_ms: 30000
    output_cap: 256k
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never, --cpus=1]"
start_brokerd gvisor "  module: gvisor
  options:
    rootfs: $work/rootfs
    state_dir: $work/gvisor-state
    cgroup_path: /boxmaker-bench-gvisor-$$
    memory: 512m
    pids: 128
    cpu_percent: 100
    read_file_ms: 30000
    output_cap: 256k
    file_size: 64m
    tmp_size: 64m"

# The bare side: the argument list bwrap.so builds (tests/bwrap/golden/read_file.argv, with
# the same seccomp filter left out: building it needs the module), run as the same uid from
# a shell already sitting in cgroups with the same limits, as the module's keepers do.
for c in memory pids cpu; do
  mkdir "/sys/fs/cgroup/$c/boxmaker-bench-$$"
  cgroups="$cgroups /sys/fs/cgroup/$c/boxmaker-bench-$$"
done
echo 536870912 > "/sys/fs/cgroup/memory/boxmaker-bench-$$/memory.limit_in_bytes"
echo 129 > "/sys/fs/cgroup/pids/boxmaker-bench-$$/pids.max"
echo 100000 > "/sys/fs/cgroup/cpu/boxmaker-bench-$$/cpu.cfs_quota_us"
args="{\"path\":\"$work/grant/file.txt\"}"
cat > "$work/bare.sh" <<SH
#!/bin/sh
# Moves itself into the bench cgroups once, then runs bare bwrap for each line it reads.
for c in memory pids cpu; do echo \$\$ > /sys/fs/cgroup/\$c/boxmaker-bench-$$/cgroup.procs; done
while read -r tag; do
  t0=\$(date +%s%N)
  printf '%s' '$args' | setpriv --reuid 65534 --regid 65534 --clear-groups \
    prlimit --fsize=67108864 -- bwrap --unshare-all --unshare-user --disable-userns \
    --die-with-parent --new-session --cap-drop ALL --uid 65534 --gid 65534 \
    --hostname boxmaker --clearenv --setenv PATH /bin --setenv HOME /tmp \
    --ro-bind $work/rootfs/bin /bin --ro-bind $work/rootfs/etc /etc \
    --ro-bind $work/rootfs/lib /lib --ro-bind $work/rootfs/lib64 /lib64 \
    --ro-bind $work/rootfs/root /root --proc /proc --dev /dev --size 67108864 \
    --perms 1777 --tmpfs /tmp --ro-bind-fd 5 $work/grant --remount-ro / \
    --chdir /tmp -- /bin/toolkit read_file > $work/bare.out 5< $work/grant
  t1=\$(date +%s%N)
  echo \$(( (t1 - t0) / 1000 )) > $work/bare.last
  echo done
done
SH
chmod 0755 "$work/bare.sh"
mkfifo "$work/bare.in" "$work/bare.ack"
"$work/bare.sh" < "$work/bare.in" > "$work/bare.ack" &
bench_pids="$bench_pids $!"
exec 7> "$work/bare.in" 8< "$work/bare.ack"

now () { date +%s%N; }
bare () { echo go >&7; read -r _ <&8; cat "$work/bare.last"; }
# The bare gVisor side: `runsc do` of the same toolkit reading the same file, on the same
# platform with no network (runsc do's own root: the host's, read-only under an overlay).
runsc_do () {
  t0=$(now)
  printf '%s' "$args" | runsc --root "$work/runsc-do" --platform=ptrace --network=none do \
    -quiet -cwd / "$build/toolkit/toolkit" read_file > "$work/runscdo.out" 2>/dev/null
  t1=$(now)
  echo $(( (t1 - t0) / 1000 ))
}
through () { # brokerd name, call id
  t0=$(now)
  "$build/client/boxmaker" call read_file "$args" --socket "$work/$1.sock" --session bench \
    --call "$2" > "$work/$1.out" 2>/dev/null
  t1=$(now)
  echo $(( (t1 - t0) / 1000 ))
}

bare > /dev/null; through bwrap w1 > /dev/null; through podman w1 > /dev/null
through gvisor w1 > /dev/null; runsc_do > /dev/null
for o in bwrap podman gvisor runscdo; do
  cmp -s "$work/bare.out" "$work/$o.out" || { echo "the sides differ ($o)"; exit 1; }
done

# round KIND ROUNDS IDLE: alternates the five sides ROUNDS times, the order rotating, with
# IDLE seconds of sleep before each measurement.
round () {
  : > "$work/$1.bare"; : > "$work/$1.bwrap"; : > "$work/$1.podman"
  : > "$work/$1.gvisor"; : > "$work/$1.runscdo"
  r=0
  while [ $r -lt "$2" ]; do
    for k in 0 1 2 3 4; do
      side=$(( (r + k) % 5 ))
      [ "$3" = 0 ] || sleep "$3"
      case $side in
        0) bare >> "$work/$1.bare" ;;
        1) through bwrap "$1$r" >> "$work/$1.bwrap" ;;
        2) through podman "$1$r" >> "$work/$1.podman" ;;
        3) through gvisor "$1$r" >> "$work/$1.gvisor" ;;
        4) runsc_do >> "$work/$1.runscdo" ;;
      esac
    done
    r=$((r + 1))
  done
}
median () { sort -n "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }

round warm "$warm_rounds" 0
round cold "$cold_rounds" 1

rss () { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
rest=$(rss "$bwrap_pid" VmRSS)
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

echo "read_file end to end, all limits on; medians in ms ($warm_rounds warm rounds, $cold_rounds cold rounds after 1 s idle)"
printf '%-28s %10s %10s\n' side warm cold
for side in bare bwrap podman runscdo gvisor; do
  case $side in
    bare) label="bare bwrap" ;; bwrap) label="brokerd + bwrap.so" ;; podman) label="brokerd + podman.so" ;;
    runscdo) label="bare runsc do" ;; gvisor) label="brokerd + gvisor.so" ;;
  esac
  printf '%-28s %10s %10s\n' "$label" "$(median "$work/warm.$side")" "$(median "$work/cold.$side")"
done
for kind in warm cold; do
  b=$(median "$work/$kind.bwrap") p=$(median "$work/$kind.podman") r=$(median "$work/$kind.bare")
  awk -v b="$b" -v p="$p" -v r="$r" -v k="$kind" 'BEGIN {
    printf "%s: podman.so / bwrap.so = %.1fx (goal >= 15x); bwrap.so / bare bwrap = %.2fx (goal <= 1.5x); bwrap.so p50 %.1f ms (goal <= 10)\n", k, p / b, b / r, b }'
  g=$(median "$work/$kind.gvisor") d=$(median "$work/$kind.runscdo")
  awk -v g="$g" -v p="$p" -v d="$d" -v k="$kind" 'BEGIN {
    printf "%s: gvisor.so / bare runsc do = %.2fx (goal <= 1.2x); podman.so / gvisor.so = %.2fx (goal >= 1.5x)\n", k, g / d, p / g }'
done
echo "brokerd with bwrap.so: VmRSS ${rest} kB at rest, peak ${peak} kB with 8 callers at once (200 calls, $failed failed), ${after} kB after"
