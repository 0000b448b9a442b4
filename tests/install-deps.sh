#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs, on Debian 12 as root, every package the build, the tests, the benchmarks, the
# package build and the VM lane (tests/vm: debootstrap, qemu) need.  Quiet when everything
# is already there.
set -eu

packages="
  build-essential cmake pkg-config git file binutils procps
  check libsubunit-dev libjansson-dev libyaml-dev nettle-dev libsystemd-dev libmicrohttpd-dev
  python3 python3-prometheus-client python3-yaml acl
  clang libclang-rt-14-dev clang-format clang-tools
  curl openssl ca-certificates python3
  podman runc slirp4netns uidmap fuse-overlayfs busybox-static iproute2 catatonit
  bubblewrap libseccomp-dev
  runsc
  microsocks
  debhelper dpkg-dev fakeroot lintian man-db scdoc systemd
  debootstrap qemu-system-x86 qemu-utils e2fsprogs
"

missing=""
for p in $packages; do
  dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
    missing="$missing $p"
done
# The MCP tests need Node.js and npm.  Debian's nodejs and npm serve; a machine that already
# has Node.js from another source (whose package ships npm and conflicts with Debian's npm)
# keeps it.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages:$missing (run as root to install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
