# shellcheck shell=sh disable=SC2034
# SPDX-License-Identifier: Apache-2.0
# Sourced by the tests that run an MCP server inside bwrap.so in a grant's own root.
#
# dev_root BUILD_DEV_IMAGE DIR: builds the development tree (build-dev-image.sh --rootfs,
# which holds python3 and node) into DIR and sets $dev_root to the reference a grant's
# `rootfs:` takes (DIR@sha256:...); status 1 with $dev_root_why saying why it cannot be
# built here.
dev_root () {
  dev_root='' dev_root_why=''
  if ! dev_root=$(sh "$1" --quiet --rootfs "$2" 2> "$2.log"); then
    dev_root_why="build-dev-image.sh --rootfs cannot build the development tree here: $(tail -n 3 "$2.log")"
    dev_root=
    return 1
  fi
}

# static_toolkit TOOLKIT: status 0 when TOOLKIT is linked statically, as it must be to run in
# a root other than the build host's (a sanitizer build's is not).
static_toolkit () { file -b "$1" | grep -q 'statically linked'; }
