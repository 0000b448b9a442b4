#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-image.sh makes an image a non-root container user can run (rootless podman's
# --userns=keep-id, or a --user in run_options) whatever the umask of whoever builds it:
# every folder and file in it is readable by all, every folder and program runnable by all.
#   image-modes.sh BUILD_IMAGE_SH TOOLKIT
set -u
build_image=$1 toolkit=$2
if ! command -v podman >/dev/null 2>&1; then
  echo "SKIP image-modes: podman is not installed (build-image.sh loads the image into it)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bx-image-modes.XXXXXX")
name=localhost/boxmaker-tools-modetest
cleanup () {
  for id in $(podman images --filter reference=$name --format '{{.ID}}' 2>/dev/null); do
    podman rmi -f "$id" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

if ! (umask 077; "$build_image" --quiet --toolkit "$toolkit" --name $name \
        --output-tar "$work/image.tar") >"$work/ref" 2>"$work/err"; then
  echo "FAIL: build-image.sh failed: $(cat "$work/err")"
  exit 1
fi
# tar -tv: mode first, name last; links are not checked (their mode means nothing).
bad=$(tar -tvf "$work/image.tar" | awk '
  $1 ~ /^d/ && ($1 !~ /^d......r.[xt]/) { print $1, $NF }
  $1 ~ /^-/ && ($1 !~ /^-......r../) { print $1, $NF }
  $1 ~ /^-/ && $NF ~ /^\.\/bin\// && ($1 !~ /^-......r.x/) { print $1, $NF }')
if [ -n "$bad" ]; then
  echo "FAIL: built under umask 077, these are closed to a non-root user:"
  echo "$bad" | head -20
  exit 1
fi
echo "ok: every folder and file of the image is open to a non-root user"
