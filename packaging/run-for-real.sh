#!/bin/sh
# run-for-real.sh: boxmaker for real, in one command, on a fresh Debian 12, as root.
#
#   packaging/run-for-real.sh
#
# Installs what is missing (apt-get), builds brokerd, boxmaker, toolkit and podman.so
# (cmake, in build-run/ beside this checkout's sources), builds the tools image and loads
# it into podman, makes a demo folder /srv/boxmaker-demo with hello.txt, writes a starter
# config granting that folder, links `boxmaker` into /usr/local/bin, and starts brokerd in
# the foreground (Ctrl-C stops it).  In a second terminal:
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

[ "$(id -u)" = 0 ] || die "run me as root (podman, apt-get and /srv need it)"
[ -f "$src/CMakeLists.txt" ] || die "no CMakeLists.txt in $src"

say "installing what is missing"
need="gcc make cmake pkg-config libjansson-dev libyaml-dev podman runc slirp4netns uidmap \
busybox-static curl ca-certificates"
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
cmake --build "$build" -j"$(nproc)" --target brokerd boxmaker toolkit podman_runtime

say "building the tools image"
image=$("$src/packaging/image/build-image.sh" --toolkit "$build/toolkit/toolkit" | tail -n 1)
echo "image: $image"

say "demo folder $demo"
mkdir -p "$demo" "$home" "$(dirname "$socket")"
[ -e "$demo/hello.txt" ] || echo "Hello from the boxmaker demo folder." > "$demo/hello.txt"
chmod 0755 "$demo"
ls -l "$demo"

# What this kind of host needs (docs/config.md, "Runtime options: podman"): as root,
# podman 4.3 runs containers with runc (crun fails on hybrid cgroups) and with explicit
# ulimits (its defaults are refused where setrlimit is not permitted); no registry, so
# never pull.
say "writing $config"
cat > "$config" <<EOF
# Written by packaging/run-for-real.sh: a starter config.  Every key: docs/config.md.
socket: $socket
home: $home
runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
    egress_network: slirp4netns
    memory: 512m
    pids: 128
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

say "note: this runs podman as root, for a quick try on a machine of your own; a writable"
say "grant then lets a sandboxed command leave setuid-root files in $demo (docs/config.md,"
say "\"Root and writable grants\"); the packaged service runs rootless instead."
say "starting brokerd (Ctrl-C stops it); in a second terminal:"
cat <<EOF

    boxmaker call read_file '{"path": "$demo/hello.txt"}'
    boxmaker call shell '{"command": "ls -l", "cwd": "$demo"}'

EOF
exec "$build/broker/brokerd" --config "$config" --runtimedir "$build/runtimes/modules"
