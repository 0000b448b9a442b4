#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bwrap.so against the conformance kit (boxmaker-runtime-check) on real bubblewrap, with a
# read-only root built here by build-image.sh --rootfs and removed at the end.  Every check
# must pass (a skip must say why).
#
#   conformance.sh CHECK BWRAP_SO BUILD_IMAGE_SH TOOLKIT
set -u
check=$1 module=$2 build_image=$3 toolkit=$4

cannot () {
  echo "skip: real bubblewrap conformance cannot run: $*"
  if [ "${BX_REQUIRE_BWRAP:-0}" = 1 ]; then
    echo "BX_REQUIRE_BWRAP=1: failing" >&2
    exit 1
  fi
  exit 77
}
[ "$(id -u)" = 0 ] || cannot "needs root (the cgroups of the limits, a root-owned rootfs)"
command -v bwrap >/dev/null 2>&1 || cannot "bubblewrap is not installed"
command -v slirp4netns >/dev/null 2>&1 || cannot "slirp4netns is not installed"
. "$(dirname "$0")/cgroup-host.sh"
cg_host bwrap-kit
[ -n "$cg_kind" ] || cannot "$cg_why"

tmp=$(mktemp -d)
chmod 0755 "$tmp"
cleanup () { rm -rf "$tmp"; cg_cleanup; }
trap cleanup EXIT
if ! "$build_image" --rootfs "$tmp/rootfs" --toolkit "$toolkit" >"$tmp/build.log" 2>&1; then
  cat "$tmp/build.log"
  echo "FAIL: the rootfs could not be built"
  exit 1
fi

# Room for a busy machine, as for podman.so: BX_SLOW, 4 unless set (boxmaker-runtime-check(1)).
"$check" "$module" --slow "${BX_SLOW:-4}" --option "rootfs=$tmp/rootfs" \
  --option "egress_dir=$tmp/egress" --option slots=4 \
  ${cg_option:+--option "cgroup_root=${cg_option#cgroup_root: }"} >"$tmp/out" 2>"$tmp/log"
rc=$?
cat "$tmp/out"
last=$(tail -n 1 "$tmp/out")
case $last in
  "conformance: "*" passed, "*" failed") ;;
  *) cat "$tmp/log"; echo "FAIL: no summary line (exit $rc)"; exit 1 ;;
esac
if [ "$rc" != 0 ] || grep -q '^FAIL: ' "$tmp/out" || ! echo "$last" | grep -q ' 0 failed$'; then
  cat "$tmp/log"
  echo "FAIL: bwrap.so fails the conformance kit (exit $rc)"
  exit 1
fi
grep -q '^skip: read_file runs toolkit' "$tmp/out" && { echo "FAIL: bwrap.so taken for no sandbox"; exit 1; }
echo "ok: bwrap.so keeps the sandbox contract"
