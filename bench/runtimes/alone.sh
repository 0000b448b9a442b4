#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# alone.sh: what binding bwrap.so's mount sources without the mounts below them costs per
# sandbox (alone.c), as root with bubblewrap installed.
#
#   bench/runtimes/alone.sh [ROUNDS]      # default 300
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/bx-bench-alone.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -D_GNU_SOURCE -O2 -I"$src/runtimes/bwrap" -I"$src/runtimes/common" -I"$src/base/include" -I"$src/plugins-api/include" -o "$work/alone" \
  "$here/alone.c" "$src/runtimes/bwrap/bwrap_alone.c" "$src/runtimes/common/open_nofollow.c"
mkdir "$work/grant"
chmod 0755 "$work"
chown 65534:65534 "$work/grant"
uptime
"$work/alone" "$work/grant" "${1:-300}"
