#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A grant chooses its runtime, with real bubblewrap and real runsc in one brokerd: bwrap.so
# is the default, gvisor.so a runtime of `runtimes` that two grants name.  A shell call in
# the default grant sees the host's kernel, one in the gVisor grant gVisor's (uname -r
# 4.4.0); a grant with its own rootfs under gvisor.so runs its shell in that root (a file
# only that root has), still on gVisor's kernel, while the other gVisor grant does not see
# that file.  --check-config names each runtime and each grant's; a grant naming a runtime
# that is not there, and an image under gvisor.so, are refused at start with
# FILE:LINE:COLUMN.
#
#   grant-runtime.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5

skip () {
  echo "SKIP a grant's runtime: $*"
  [ "${BX_REQUIRE_GVISOR:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (runsc makes the sandboxes' cgroups and namespaces)"
command -v runsc > /dev/null || skip "runsc is not installed (apt-get install runsc)"
command -v bwrap > /dev/null || skip "bubblewrap is not installed"
# A toolkit that is not static (a sanitizer build) cannot run in a grant's own root.
file -b "$toolkit" | grep -q 'statically linked' || skip "toolkit is not static (a sanitizer build)"
. "$(dirname "$0")/../common/wait_socket.sh"
. "$(dirname "$0")/../bwrap/cgroup-host.sh"
cg_host gvisor-grant-runtime
[ -n "$cg_kind" ] || skip "$cg_why"
digest_of=$(dirname "$build_image")/rootfs-digest.sh

work=$(mktemp -d /tmp/bx-grant-runtime.XXXXXX)
chmod 0755 "$work"
pids=
cgroup=/bx-grant-runtime-$$
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  for c in /sys/fs/cgroup/*$cgroup /sys/fs/cgroup$cgroup; do [ -d "$c" ] && rmdir "$c" 2>/dev/null; done
  cg_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

# The modules' root, and a grant's own root: the same tools with one file more.
"$build_image" --quiet --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; echo "FAIL: cannot build the root"; exit 1; }
"$build_image" --quiet --rootfs "$work/own" --toolkit "$toolkit" > "$work/own.log" 2>&1 \
  || { cat "$work/own.log"; echo "FAIL: cannot build the grant's root"; exit 1; }
echo "only in the grant's root" > "$work/own/etc/only-here"
chmod 0644 "$work/own/etc/only-here"
own="$work/own@sha256:$("$digest_of" "$work/own")"
mkdir -p "$work/quick" "$work/strong" "$work/mine" "$work/home"
# The sandbox's user is not the host's root: it writes only a folder open to it.
chmod 0777 "$work/mine"

# config NAME EXTRA_GRANT [EXTRA_STRONG_OPTIONS]: the config in $work/NAME.yaml; its first
# lines are the same in every one, so the places the checks name hold for all.
config () {
  more_options=
  [ -z "${3:-}" ] || more_options="
$3"
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
socket_mode: 0666
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    ${cg_option:-slots: 16}
runtimes:
  strong:
    module: gvisor
    options:
      rootfs: $work/rootfs
      state_dir: $work/state
      cgroup_path: $cgroup$more_options
grants:
  - tools: [shell]
    paths: [$work/quick]
  - tools: [shell]
    paths: [$work/strong]
    runtime: strong
$2
YAML
}

config serve "  - tools: [shell]
    paths: [$work/mine]
    runtime: strong
    rootfs: $own"
"$brokerd" --check-config "$work/serve.yaml" --runtimedir "$runtimedir" > "$work/check.out" 2>&1
rc=$? check=$(cat "$work/check.out")
if [ $rc = 0 ] && contains "$check" "runtime: bwrap (" && contains "$check" "runtime strong: gvisor (" \
  && contains "$check" "grant 2 (line 20): shell in $work/strong, runtime strong; class private, trusted" \
  && contains "$check" ", in rootfs $own, runtime strong;"; then
  pass "--check-config names the default runtime, runtime strong and each grant's"
else
  fail "--check-config (exit $rc): $check"
fi

"$brokerd" --config "$work/serve.yaml" --runtimedir "$runtimedir" 2>> "$work/serve.log" &
pids="$pids $!"
wait_socket "$work/serve.sock" $! || { cat "$work/serve.log"; echo "FAIL: brokerd did not start"; exit 1; }

# shell FOLDER COMMAND: the call's answer in $out.
n=0
shell () {
  n=$((n + 1))
  out=$("$boxmaker" call shell "{\"command\":\"$2\",\"cwd\":\"$work/$1\"}" \
    --socket "$work/serve.sock" --session runtime-$$ --call "c$n" 2> "$work/c$n.err")
  [ -n "$out" ] || out="(no answer: $(cat "$work/c$n.err"))"
}

host_release=$(uname -r)
shell quick "uname -r"
case $out in
  *"$host_release"*) pass "the default grant runs under bwrap.so on the host's kernel: $host_release" ;;
  *) fail "the default grant: uname -r said $out, not the host's $host_release" ;;
esac
shell strong "uname -r"
case $out in
  *4.4.0*) pass "the grant naming runtime strong runs on gVisor's kernel: 4.4.0" ;;
  *) fail "the grant naming runtime strong: uname -r said $out, not gVisor's 4.4.0" ;;
esac
shell mine "cat /etc/only-here; uname -r"
if contains "$out" "only in the grant's root" && contains "$out" 4.4.0; then
  pass "a grant's own rootfs under gvisor.so: its file is there, on gVisor's kernel"
else
  fail "a grant's own rootfs under gvisor.so: $out"
fi
shell strong "cat /etc/only-here 2>&1 || echo absent"
case $out in
  *absent*) pass "the other gVisor grant runs in the module's root, without that file" ;;
  *) fail "the other gVisor grant sees the grant's root: $out" ;;
esac
shell mine "echo written > out.txt && cat out.txt"
if contains "$out" written && [ "$(cat "$work/mine/out.txt" 2>/dev/null)" = written ]; then
  pass "the grant's folder is mounted writable in its own root"
else
  fail "writing the grant's folder in its own root: $out"
fi

# Refused at start, with the place: a runtime that is not there, an image under gvisor.so.
config nosuch "  - tools: [shell]
    paths: [$work/mine]
    runtime: nosuch"
"$brokerd" --check-config "$work/nosuch.yaml" --runtimedir "$runtimedir" > "$work/nosuch.out" 2>&1
rc=$? got=$(cat "$work/nosuch.out")
if [ $rc = 1 ] && contains "$got" "$work/nosuch.yaml:25:14:" && contains "$got" "nosuch.so: no such file"; then
  pass "a grant naming a runtime that is not there is refused at FILE:LINE:COLUMN"
else
  fail "runtime: nosuch (exit $rc): $got"
fi
config image "  - tools: [shell]
    paths: [$work/mine]
    runtime: strong
    image: localhost/any@sha256:$(printf '%064d' 0)"
"$brokerd" --check-config "$work/image.yaml" --runtimedir "$runtimedir" > "$work/image.out" 2>&1
rc=$? got=$(cat "$work/image.out")
if [ $rc = 1 ] && contains "$got" "$work/image.yaml:26:12: grant 3 image localhost/any@sha256:" \
  && contains "$got" "gvisor.so runs no image"; then
  pass "an image under gvisor.so is refused at FILE:LINE:COLUMN"
else
  fail "an image under gvisor.so (exit $rc): $got"
fi

# gvisor.so runs its nsenter as root (to start the egress proxy in the sandbox's network
# namespace), and runsc writes its debug logs into debug_log as root: a grant a sandbox
# writes, of any runtime, may hold neither, as for runsc and slirp4netns.
mkdir -p "$work/tools"
chmod 0777 "$work/tools"
config helpers "  - tools: [shell]
    paths: [$work/tools]
  - tools: [http_fetch]
    hosts: [example.com]
    runtime: strong" "      nsenter: $work/tools/nsenter
      debug_log: $work/tools/debug"
"$brokerd" --check-config "$work/helpers.yaml" --runtimedir "$runtimedir" > "$work/helpers.out" 2>&1
rc=$? got=$(cat "$work/helpers.out")
if [ $rc = 1 ] && contains "$got" "$work/tools/nsenter, which runtime module gvisor protects" \
  && contains "$got" "$work/tools/debug, which runtime module gvisor protects"; then
  pass "a writable grant holding gvisor.so's nsenter or debug_log is refused"
else
  fail "gvisor.so's nsenter and debug_log in a writable grant (exit $rc): $got"
fi

if [ $failures -ne 0 ]; then
  echo "brokerd's log:"; cat "$work/serve.log"
  exit 1
fi
echo "a grant's runtime: all as expected"
