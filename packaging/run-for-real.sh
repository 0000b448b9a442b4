#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-for-real.sh: boxmaker for real, in one command, on a fresh Debian 12, as root.
#
#   packaging/run-for-real.sh [--runtime bwrap|podman|gvisor] [--no-build] [--no-start]
#
# Chooses the runtime: bwrap (bubblewrap, which starts a sandbox in milliseconds) where the
# host supports it (the memory, pids and cpu cgroup controllers for its limits, on cgroup v2
# or on cgroup v1, and user namespaces), podman otherwise; --runtime picks one.  It says
# which and why.
#
# Installs what is missing (apt-get), builds brokerd (and refusing.so, for a config without
# `runtime:`), boxmaker, toolkit and the runtime module (cmake, in build-run/ beside this
# checkout), builds the read-only root (bwrap) or the tools image loaded into podman (podman),
# makes a demo folder /srv/boxmaker-demo with hello.txt, writes a starter config granting that
# folder, links `boxmaker` into /usr/local/bin, and starts brokerd in the foreground (Ctrl-C).
# On a host where systemd is PID 1 and cgroups are v2, brokerd runs in a transient scope
# with a cgroup subtree of its own (systemd-run --scope -p Delegate=yes), as bwrap.so
# needs.  In a second terminal, the commands it prints, such as:
#
#   boxmaker call read_file '{"path": "/srv/boxmaker-demo/hello.txt"}' --socket /run/boxmaker/broker.sock
#   boxmaker call shell '{"command": "ls -l", "cwd": "/srv/boxmaker-demo"}' --socket /run/boxmaker/broker.sock
#
# --no-build uses the programs already built in the build folder (broker/brokerd,
# client/boxmaker, toolkit/toolkit, runtimes/modules/) instead of building them.
# --no-start does everything but start brokerd: it prints the command that would.
#
# Environment, each optional:
#   BX_BUILD_DIR  the build folder (default <checkout>/build-run)
#   BX_DEMO_DIR   the demo folder (default /srv/boxmaker-demo)
#   BX_SOCKET     brokerd's socket (default /run/boxmaker/broker.sock, where boxmaker looks)
#   BX_HOME       brokerd's home (default /var/lib/boxmaker-run-for-real: not the packaged
#                 service's /var/lib/boxmaker, which purging the boxmaker package removes)
#   BX_ROOTFS     bwrap's or gvisor's read-only root (default /var/lib/boxmaker-RUNTIME/rootfs)
#   BX_BIN_DIR    the folder `boxmaker` is linked into (default /usr/local/bin); empty: no
#                 link anywhere, and the printed commands name the build's boxmaker
#   BX_NO_APT     1: install nothing; say what is missing and stop
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${BX_BUILD_DIR:-$src/build-run}
demo=${BX_DEMO_DIR:-/srv/boxmaker-demo}
socket=${BX_SOCKET:-/run/boxmaker/broker.sock}
home=${BX_HOME:-/var/lib/boxmaker-run-for-real}
rootfs=${BX_ROOTFS:-}
bin_dir=${BX_BIN_DIR-/usr/local/bin}
config=$build/run-for-real.yaml

say () { printf '\n== %s\n' "$*"; }
die () { echo "run-for-real.sh: $*" >&2; exit 1; }

runtime=
build_it=1
start_it=1
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) [ $# -ge 2 ] || die "--runtime needs bwrap, podman or gvisor"; runtime=$2; shift 2 ;;
    --runtime=*) runtime=${1#--runtime=}; shift ;;
    --no-build) build_it=0; shift ;;
    --no-start) start_it=0; shift ;;
    -h|--help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
case $runtime in ''|bwrap|podman|gvisor) ;; *) die "--runtime $runtime: bwrap, podman or gvisor" ;; esac
# gVisor's sandboxes answer the tool's system calls with a kernel of their own (docs/security.md).
[ -n "$rootfs" ] || { [ "$runtime" = gvisor ] && rootfs=/var/lib/boxmaker-gvisor/rootfs || rootfs=/var/lib/boxmaker-bwrap/rootfs; }

[ "$(id -u)" = 0 ] || die "run me as root (the runtimes, apt-get and /srv need it)"
[ -f "$src/CMakeLists.txt" ] || die "no CMakeLists.txt in $src"
for v in "$build" "$demo" "$socket" "$home" "$rootfs"; do
  case $v in /*) ;; *) die "$v: give an absolute path" ;; esac
  case $v in *[[:space:]]*) die "\"$v\": give a path without spaces" ;; esac
done
case $bin_dir in ''|/*) ;; *) die "BX_BIN_DIR=$bin_dir: give an absolute path, or nothing" ;; esac

# cgroup v2 (one unified hierarchy, as systemd hosts boot) or v1 (a hierarchy per controller).
cgroup_v2 () { [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; }
# What bwrap.so needs of the host, or why it cannot run here.
bwrap_unsupported () {
  if cgroup_v2; then
    for c in memory pids cpu; do
      grep -qw "$c" /sys/fs/cgroup/cgroup.controllers 2>/dev/null \
        || { echo "cgroup v2 offers no $c controller for its limits (/sys/fs/cgroup/cgroup.controllers)"; return 0; }
    done
  else
    for c in memory pids cpu; do
      [ -e "/sys/fs/cgroup/$c/cgroup.procs" ] \
        || { echo "no cgroup v1 $c hierarchy for its limits (/sys/fs/cgroup/$c)"; return 0; }
    done
  fi
  [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] \
    || { echo "user namespaces are disabled (user.max_user_namespaces is 0)"; return 0; }
  return 1
}
if cgroup_v2; then cgroups="cgroup v2"; else cgroups="cgroup v1"; fi
if [ -z "$runtime" ]; then
  if why=$(bwrap_unsupported); then
    runtime=podman
    say "runtime: podman, since this host cannot run bwrap: $why"
  else
    runtime=bwrap
    say "runtime: bwrap, the faster one (a sandbox in milliseconds, podman takes hundreds); this host has $cgroups with the memory, pids and cpu controllers, and user namespaces; --runtime podman picks podman"
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
elif [ "$runtime" = gvisor ]; then
  need="$need runsc"
else
  need="$need podman runc uidmap"
fi
missing=
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing="$missing $p"
done
if [ -n "$missing" ] && [ "${BX_NO_APT:-0}" = 1 ]; then
  die "missing packages:$missing (BX_NO_APT=1: not installing them)"
elif [ -n "$missing" ]; then
  echo "apt-get install$missing"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
else
  echo "nothing: every package is there"
fi

if [ "$build_it" = 1 ]; then
  say "building in $build"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
        -DBX_TEST_HOOKS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target brokerd boxmaker toolkit "${runtime}_runtime"
else
  say "using what $build holds (--no-build)"
fi
for f in broker/brokerd client/boxmaker toolkit/toolkit "runtimes/modules/$runtime.so"; do
  [ -f "$build/$f" ] || die "no $build/$f"
done

if [ "$runtime" = bwrap ] || [ "$runtime" = gvisor ]; then
  # Where the package puts it (BX_ROOTFS elsewhere): bubblewrap runs as nobody, which must
  # be able to enter every folder above it (a root under /root would not do).
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
elif [ "$runtime" = gvisor ]; then
  # gvisor's sandboxes write as host uid 201000 (id_base 200000 + uid 1000).
  chown 201000:201000 "$demo"
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
    rootfs: $rootfs
    memory: 512m
    pids: 128"
elif [ "$runtime" = gvisor ]; then
  # docs/config.md, "Runtime options: gvisor": every limit on by default, platform ptrace.
  runtime_block="  module: gvisor
  options:
    rootfs: $rootfs
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

if [ -n "$bin_dir" ]; then
  mkdir -p "$bin_dir"
  ln -sf "$build/client/boxmaker" "$bin_dir/boxmaker"
  echo "linked $bin_dir/boxmaker to $build/client/boxmaker"
  client=boxmaker
  case ":$PATH:" in *":$bin_dir:"*) ;; *) client=$bin_dir/boxmaker ;; esac
else
  client=$build/client/boxmaker
fi
"$build/broker/brokerd" --check-config "$config" --runtimedir "$build/runtimes/modules"

if [ "$runtime" = podman ]; then
  say "note: this runs podman as root; the sandboxes run as host uid 700000000, which owns $demo"
  say "(docs/security.md); the packaged service can run podman rootless instead (README.Debian)."
fi
brokerd="$build/broker/brokerd --config $config --runtimedir $build/runtimes/modules"
# Under systemd on cgroup v2, a process of a login session may not make cgroups of its own:
# a transient scope with Delegate=yes gives brokerd a subtree (bwrap.so's limits live there).
if cgroup_v2 && [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then
  brokerd="systemd-run --quiet --scope --collect -p Delegate=yes --unit=boxmaker-run-for-real-$$ $brokerd"
fi
calls="
    $client call read_file '{\"path\": \"$demo/hello.txt\"}' --socket $socket
    $client call shell '{\"command\": \"ls -l\", \"cwd\": \"$demo\"}' --socket $socket
"
if [ "$start_it" = 0 ]; then
  say "ready; start brokerd with:"
  printf '\n    %s\n' "$brokerd"
  say "then, in a second terminal:"
  echo "$calls"
  exit 0
fi
say "starting brokerd (Ctrl-C stops it); in a second terminal:"
echo "$calls"
# shellcheck disable=SC2086 # the command is words, paths without spaces (checked above)
exec $brokerd
