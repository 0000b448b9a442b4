#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gvisor.so's tools run on gVisor's kernel, not the host's: through brokerd with real runsc,
# a shell sees gVisor's release and version (uname -r, uname -v) and its boot lines (dmesg),
# and a system call that bwrap.so's and podman.so's host filters refuse (io_uring_setup, a
# row of runtimes/common/seccomp_table.c) reaches gVisor's kernel and gets its answer:
# neither the host filter's errno nor the host kernel's.  The same checks are made of a
# bwrap.so sandbox, where they must fail, so that a call run under the host's filter would
# fail them too.
#
#   kernel.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE PROBE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5 probe=$6

skip () {
  echo "SKIP gVisor's kernel through gvisor.so: $*"
  [ "${BX_REQUIRE_GVISOR:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (runsc makes the sandboxes' cgroups and namespaces)"
command -v runsc > /dev/null || skip "runsc is not installed (apt-get install runsc)"
. "$(dirname "$0")/../common/wait_socket.sh"
. "$(dirname "$0")/../bwrap/cgroup-host.sh"

work=$(mktemp -d /tmp/bx-gvisor-kernel.XXXXXX)
chmod 0755 "$work"
pids=
cgroup=/bx-gvisor-kernel-$$
cg_kind=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  for c in /sys/fs/cgroup/*$cgroup /sys/fs/cgroup$cgroup; do [ -d "$c" ] && rmdir "$c" 2>/dev/null; done
  [ -z "$cg_kind" ] || cg_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }

"$build_image" --quiet --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; echo "FAIL: cannot build the root"; exit 1; }
mkdir -p "$work/w" "$work/home"
cp "$probe" "$work/w/probe"
chmod 0755 "$work/w/probe"

# start NAME MODULE OPTION_LINES: brokerd on $work/NAME.sock with a shell grant on $work/w.
start () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
socket_mode: 0666
home: $work/home
runtime:
  module: $2
  options:
$3
grants:
  - tools: [shell]
    paths: [$work/w]
    class: private
YAML
  "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" 2>> "$work/$1.log" &
  pids="$pids $!"
  wait_socket "$work/$1.sock" $! || { cat "$work/$1.log"; echo "FAIL: brokerd $1 did not start"; exit 1; }
}

# look NAME: what a shell in NAME's sandbox sees, in $out.
look () {
  "$boxmaker" call shell "{\"command\":\"echo release=\$(uname -r); echo version=\$(uname -v); dmesg 2>&1 | sed 's/^/dmesg: /'; ./probe\",\"cwd\":\"$work/w\"}" \
    --socket "$work/$1.sock" --session kernel-$$ --call "$1" > "$work/$1.out" 2> "$work/$1.err"
  out=$(cat "$work/$1.out")
  [ -n "$out" ] || fail "$1: no answer: $(cat "$work/$1.err")"
}

field () { printf '%s\n' "$1" | sed -n "s/^$2=//p" | head -n 1; }
answer () { field "$1" "$2" | cut -d' ' -f1; }

# The host's own: its kernel's release and version, and the probe's answers outside any
# sandbox.
host_release=$(uname -r) host_version=$(uname -v)
host_probe=$(cd "$work/w" && ./probe)
echo "host: $host_release, $host_version"
printf '%s\n' "$host_probe" | sed 's/^/host: /'

# kernel_is_gvisor OUTPUT: 0 when OUTPUT shows gVisor's kernel, else 1 with $why.
kernel_is_gvisor () {
  why=
  [ "$(field "$1" release)" != "$host_release" ] || why="$why uname -r is the host's;"
  [ "$(field "$1" version)" != "$host_version" ] || why="$why uname -v is the host's;"
  case $1 in *"dmesg: "*"Starting gVisor"*) ;; *) why="$why no gVisor boot line in dmesg;" ;; esac
  [ -z "$why" ]
}

# call_reaches_gvisor OUTPUT: 0 when the refused call got neither the host filter's answer
# (the table's errno) nor the host kernel's, else 1 with $why.
call_reaches_gvisor () {
  why=
  line=$(field "$1" "io_uring_setup(IOPOLL)")
  got=${line%% *} filter=${line##*table=} bare=$(answer "$host_probe" "io_uring_setup(IOPOLL)")
  if [ -z "$got" ]; then
    why="no answer from the probe"
  elif [ "$got" = "$filter" ]; then
    why="io_uring_setup(IOPOLL)=$got, the host filter's answer"
  elif [ "$got" = "$bare" ]; then
    why="io_uring_setup(IOPOLL)=$got, the host kernel's answer"
  fi
  [ -z "$why" ]
}

start gvisor gvisor "    rootfs: $work/rootfs
    state_dir: $work/state
    cgroup_path: $cgroup"
look gvisor
printf '%s\n' "$out" | grep -v '^dmesg: ' | sed 's/^/gvisor.so: /'
if kernel_is_gvisor "$out"; then
  pass "uname and dmesg show gVisor's kernel: $(field "$out" release), $(field "$out" version), $(printf '%s\n' "$out" | grep -m1 'Starting gVisor')"
else
  fail "gvisor.so's sandbox does not show gVisor's kernel:$why"
fi
if call_reaches_gvisor "$out"; then
  pass "io_uring_setup(IOPOLL) reaches gVisor's kernel: $(answer "$out" "io_uring_setup(IOPOLL)") (host filter $(field "$out" "io_uring_setup(IOPOLL)" | sed 's/.*table=//'), host kernel $(answer "$host_probe" "io_uring_setup(IOPOLL)"))"
else
  fail "gvisor.so: $why"
fi
# A family the host filter refuses with EAFNOSUPPORT is refused inside gVisor as well (by
# the filter gVisor's kernel runs, whose errno this runsc may not take from the table).
case $(answer "$out" "socket(AF_VSOCK)") in
  ok | "") fail "socket(AF_VSOCK) is not refused in gvisor.so's sandbox: $out" ;;
  *) pass "socket(AF_VSOCK) refused inside gVisor: $(answer "$out" "socket(AF_VSOCK)") (host filter $(field "$out" "socket(AF_VSOCK)" | sed 's/.*table=//'))" ;;
esac

# The control: under bwrap.so the call runs on the host under its filter, and the same
# checks must fail there.
if command -v bwrap > /dev/null; then
  cg_host gvisor-kernel
fi
if [ -n "$cg_kind" ]; then
  start bwrap bwrap "    rootfs: $work/rootfs
    egress_dir: $work/egress
    $cg_option"
  look bwrap
  printf '%s\n' "$out" | grep -v '^dmesg: ' | sed 's/^/bwrap.so: /'
  if kernel_is_gvisor "$out"; then
    fail "the kernel check passes under bwrap.so too: it proves nothing"
  else
    pass "the kernel check fails under bwrap.so:$why"
  fi
  if call_reaches_gvisor "$out"; then
    fail "the system call check passes under bwrap.so too: it proves nothing"
  else
    pass "the system call check fails under bwrap.so: $why"
  fi
else
  echo "note: the control under bwrap.so did not run: ${cg_why:-bubblewrap is not installed}"
fi

if [ $failures -ne 0 ]; then
  for l in "$work"/*.log; do echo "$l:"; cat "$l"; done
  exit 1
fi
echo "gVisor's kernel through gvisor.so: all as expected"
