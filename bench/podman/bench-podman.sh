#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench-podman.sh: a read_file call end to end (boxmaker -> brokerd -> podman.so -> podman)
# against a bare `podman run` of the same arguments, side by side in one run, and the ratio.
# The goal: brokerd and the module add at most 10 % to podman's own time.
#
#   bench/podman/bench-podman.sh BUILD_DIR [ROUNDS]
#
# BUILD_DIR holds a build of this tree (brokerd, boxmaker, toolkit, podman.so).  Builds the
# tools image (localhost/boxmaker-tools-bench) and removes it afterwards.  As root on this
# kind of host (runc, explicit ulimits); ROUNDS defaults to 15, alternating the two sides.
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-15}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/bx-bench-podman.XXXXXX)
chmod 0755 "$work"
brokerd_pid=
cleanup () {
  [ -z "$brokerd_pid" ] || kill "$brokerd_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  for id in $(podman images --filter reference=localhost/boxmaker-tools-bench --format '{{.ID}}'); do
    podman rmi -f "$id" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

image=$("$src/packaging/image/build-image.sh" --quiet --toolkit "$build/toolkit/toolkit" \
          --name localhost/boxmaker-tools-bench | tail -n 1)
mkdir -p "$work/grant" "$work/home"
echo "a line to read" > "$work/grant/file.txt"
globals="--runtime runc"
runopts="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --pull=never"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
grants:
  - tools: [read_file]
    paths: [$work/grant]
    class: private
YAML
"$build/broker/brokerd" --config "$work/b.yaml" --runtimedir "$build/runtimes/modules" \
  2> "$work/brokerd.log" &
brokerd_pid=$!
i=0
while [ ! -S "$work/b.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

args="{\"path\":\"$work/grant/file.txt\"}"
now () { date +%s%N; }

# The same argument list podman.so builds (tests/podman/golden/read_file.argv).
bare () {
  printf '%s' "$args" | podman $globals run --rm -i --name="boxmaker-bench-bare-$1" \
    --label=boxmaker=tool --network=none --read-only --cap-drop=all \
    --security-opt=no-new-privileges \
    --security-opt=seccomp="$build/runtimes/modules/podman-seccomp.json" --http-proxy=false \
    --timeout=32 --uidmap=0:700000000:65536 --gidmap=0:700000000:65536 --cpus=1 \
    --ulimit=fsize=1073741824:1073741824 --pids-limit=128 --memory=512m \
    --tmpfs=/tmp:rw,size=64m,mode=1777 $runopts \
    --mount="type=bind,src=$work/grant,dst=$work/grant,ro=true,bind-nonrecursive" \
    "$image" /bin/toolkit read_file > "$work/bare.out"
}
# The list before the containment options (no user namespace, podman's default seccomp
# profile, no --timeout, --cpus, fsize, --http-proxy=false; --volume): what they cost.
plain () {
  printf '%s' "$args" | podman $globals run --rm -i --name="boxmaker-bench-plain-$1" \
    --label=boxmaker=tool --network=none --read-only --cap-drop=all \
    --security-opt=no-new-privileges --pids-limit=128 --memory=512m \
    --tmpfs=/tmp:rw,size=64m,mode=1777 $runopts \
    --volume="$work/grant:$work/grant:ro" "$image" /bin/toolkit read_file > "$work/plain.out"
}
through () {
  "$build/client/boxmaker" call read_file "$args" --socket "$work/b.sock" \
    --session bench --call "c$1" > "$work/through.out" 2>/dev/null
}

# One warm-up of each (image layers and podman's own caches), then alternate.
bare warm; through warm; plain warm
cmp -s "$work/bare.out" "$work/through.out" || { echo "the two sides differ"; exit 1; }
cmp -s "$work/bare.out" "$work/plain.out" || { echo "the plain side differs"; exit 1; }
: > "$work/bare.us"; : > "$work/through.us"; : > "$work/plain.us"
r=0
while [ $r -lt "$rounds" ]; do
  # Which side goes first alternates too, so neither always follows the other.
  if [ $((r % 2)) = 0 ]; then
    t0=$(now); bare "$r"; t1=$(now); through "$r"; t2=$(now)
    echo $(( (t1 - t0) / 1000 )) >> "$work/bare.us"
    echo $(( (t2 - t1) / 1000 )) >> "$work/through.us"
  else
    t0=$(now); through "$r"; t1=$(now); bare "$r"; t2=$(now)
    echo $(( (t1 - t0) / 1000 )) >> "$work/through.us"
    echo $(( (t2 - t1) / 1000 )) >> "$work/bare.us"
  fi
  t0=$(now); plain "$r"; t1=$(now)
  echo $(( (t1 - t0) / 1000 )) >> "$work/plain.us"
  r=$((r + 1))
done

median () { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mean () { awk '{ s += $1 } END { printf "%.0f", s / NR }' "$1"; }
mb=$(median "$work/bare.us"); mt=$(median "$work/through.us"); mp=$(median "$work/plain.us")
echo "read_file, $rounds rounds, alternating (microseconds):"
echo "  bare podman run:             median $mb  mean $(mean "$work/bare.us")"
echo "  boxmaker+brokerd+podman.so:  median $mt  mean $(mean "$work/through.us")"
echo "  podman run, no containment:  median $mp  mean $(mean "$work/plain.us")"
awk -v a="$mt" -v b="$mb" 'BEGIN { printf "  ratio (median): %.3f  (overhead %+.1f %%; goal <= +10 %%)\n", a / b, (a / b - 1) * 100 }'
awk -v a="$mb" -v b="$mp" 'BEGIN { printf "  containment options (median): %.3f  (%+.1f %% over the plain list)\n", a / b, (a / b - 1) * 100 }'
