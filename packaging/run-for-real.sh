#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-for-real.sh: boxmaker for real, in one command, on a fresh Debian 12, as root.
#
#   packaging/run-for-real.sh [--runtime bwrap|podman]
#
# Chooses the runtime: bwrap (bubblewrap, which starts a sandbox in milliseconds) where the
# host supports it (cgroup v1 memory, pids and cpu hierarchies for its limits, and user
# namespaces), podman otherwise; --runtime picks one.  It says which and why.
#
# Installs what is missing (apt-get), builds brokerd, boxmaker, toolkit and the runtime
# module (cmake, in build-run/ beside this checkout's sources), builds the read-only root
# (bwrap) or the tools image loaded into podman (podman), makes a demo folder
# /srv/boxmaker-demo with hello.txt, writes a starter config granting that folder, links
# `boxmaker` into /usr/local/bin, and starts brokerd in the foreground (Ctrl-C stops it).
# In a second terminal:
#
#   boxmaker call read_file '{"path": "/srv/boxmaker-demo/hello.txt"}'
#   boxmaker call shell '{"command": "ls -l", "cwd": "/srv/boxmaker-demo"}'
#
# Environment: BX_BUILD_DIR (default <checkout>/build-run), BX_DEMO_DIR (default
# /srv/boxmaker-demo), BX_SOCKET (default /run/boxmaker/broker.sock, where boxmaker looks).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${BX_BUILD_DIR:-$src/build-run}
demo=${BX_DEMO_DIR:-/srv/boxmaker-demo}
socket=${BX_SOCKET:-/run/boxmaker/broker.sock}
home=/var/lib/boxmaker
config=$build/run-for-real.yaml

say () { printf '\n== %s\n' "$*"; }
die () { echo "run-for-real.sh: $*" >&2; exit 1; }

runtime=
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) [ $# -ge 2 ] || die "--runtime needs bwrap or podman"; runtime=$2; shift 2 ;;
    --runtime=*) runtime=${1#--runtime=}; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
case $runtime in ''|bwrap|podman) ;; *) die "--runtime $runtime: bwrap or podman" ;; esac

[ "$(id -u)" = 0 ] || die "run me as root (the runtimes, apt-get and /srv need it)"
[ -f "$src/CMakeLists.txt" ] || die "no CMakeLists.txt in $src"

# What bwrap.so needs of the host, or why it cannot run here.
bwrap_unsupported () {
  for c in memory pids cpu; do
    [ -e "/sys/fs/cgroup/$c/cgroup.procs" ] \
      || { echo "no cgroup v1 $c hierarchy for its limits (/sys/fs/cgroup/$c)"; return 0; }
  done
  [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] \
    || { echo "user namespaces are disabled (user.max_user_namespaces is 0)"; return 0; }
  return 1
}
if [ -z "$runtime" ]; then
  if why=$(bwrap_unsupported); then
    runtime=podman
    say "runtime: podman, since this host cannot run bwrap: $why"
  else
    runtime=bwrap
    say "runtime: bwrap, the faster one (a sandbox in milliseconds, podman takes hundreds); this host has cgroup v1 and user namespaces; --runtime podman picks podman"
  fi
elif [ "$runtime" = bwrap ] && why=$(bwrap_unsupported); then
  die "--runtime bwrap: this host cannot run it: $why"
else
  say "runtime: $runtime, as asked"
fi

say "installing what is missing"
# What the build needs whatever the runtime (cmake configures every part), then the runtime's.
need="gcc make cmake pkg-config libjansson-dev libyaml-dev nettle-dev libsystemd-dev \
libmicrohttpd-dev libseccomp-dev busybox-static curl ca-certificates slirp4netns"
if [ "$runtime" = bwrap ]; then
  need="$need bubblewrap"
else
  need="$need podman runc uidmap"
fi
missing=
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "apt-get install$missing"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
else
  echo "nothing: every package is there"
fi

say "building in $build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
      -DBX_TEST_HOOKS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target brokerd boxmaker toolkit "${runtime}_runtime"

if [ "$runtime" = bwrap ]; then
  # Where the package puts it, and bwrap.so looks by default: bubblewrap runs as nobody,
  # which must be able to enter every folder above it (a build under /root would not do).
  rootfs=/var/lib/boxmaker-bwrap/rootfs
  say "building the read-only root $rootfs"
  "$src/packaging/image/build-image.sh" --rootfs "$rootfs" --toolkit "$build/toolkit/toolkit"
else
  say "building the tools image"
  image=$("$src/packaging/image/build-image.sh" --toolkit "$build/toolkit/toolkit" | tail -n 1)
  echo "image: $image"
fi

say "demo folder $demo"
mkdir -p "$demo" "$home" "$(dirname "$socket")"
[ -e "$demo/hello.txt" ] || echo "Hello from the boxmaker demo folder." > "$demo/hello.txt"
chmod 0755 "$demo"
if [ "$runtime" = bwrap ]; then
  # bwrap's sandboxes run as nobody: the demo folder is theirs to write.
  chown 65534:65534 "$demo"
else
  # podman's sandbox root is host uid 700000000 (podman.so's uidmap_base): the grant is given
  # to it, so that write_file and shell can write there (docs/security.md).
  chown 700000000:700000000 "$demo"
fi
ls -l "$demo"

# What this kind of host needs (docs/config.md, "Runtime options: podman"): as root,
# podman 4.3 runs containers with runc (crun fails on hybrid cgroups) and with explicit
# ulimits (its defaults are refused where setrlimit is not permitted); no registry, so
# never pull.
say "writing $config"
if [ "$runtime" = bwrap ]; then
  # docs/config.md, "Runtime options: bwrap": every limit on by default.
  runtime_block="  module: bwrap
  options:
    memory: 512m
    pids: 128"
else
  runtime_block="  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
    egress_network: slirp4netns
    memory: 512m
    pids: 128"
fi
cat > "$config" <<EOF
# Written by packaging/run-for-real.sh: a starter config.  Every key: docs/config.md.
socket: $socket
home: $home
runtime:
$runtime_block
grants:
  - tools: [read_file, write_file, shell]
    paths: [$demo]
    class: private
  - tools: [http_fetch]
    hosts: [example.com]
    class: public
EOF
cat "$config"

ln -sf "$build/client/boxmaker" /usr/local/bin/boxmaker
"$build/broker/brokerd" --check-config "$config" --runtimedir "$build/runtimes/modules"

if [ "$runtime" = podman ]; then
  say "note: this runs podman as root; the sandboxes run as host uid 700000000, which owns $demo"
  say "(docs/security.md); the packaged service runs rootless instead."
fi
say "starting brokerd (Ctrl-C stops it); in a second terminal:"
cat <<EOF

    boxmaker call read_file '{"path": "$demo/hello.txt"}'
    boxmaker call shell '{"command": "ls -l", "cwd": "$demo"}'

EOF
exec "$build/broker/brokerd" --config "$config" --runtimedir "$build/runtimes/modules"
