#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gvisor.so against the conformance kit (boxmaker-runtime-check) on real runsc, with a
# read-only root built here by build-image.sh --rootfs and removed at the end.  Every check
# must pass (a skip must say why).
#
#   conformance.sh CHECK GVISOR_SO BUILD_IMAGE_SH TOOLKIT
set -u
check=$1 module=$2 build_image=$3 toolkit=$4

cannot () {
  echo "skip: real runsc conformance cannot run: $*"
  if [ "${BX_REQUIRE_GVISOR:-0}" = 1 ]; then
    echo "BX_REQUIRE_GVISOR=1: failing" >&2
    exit 1
  fi
  exit 77
}
[ "$(id -u)" = 0 ] || cannot "needs root (runsc makes the sandboxes' cgroups and namespaces)"
command -v runsc >/dev/null 2>&1 || cannot "runsc is not installed (apt-get install runsc)"
command -v slirp4netns >/dev/null 2>&1 || cannot "slirp4netns is not installed"

tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
if ! "$build_image" --rootfs "$tmp/rootfs" --toolkit "$toolkit" >"$tmp/build.log" 2>&1; then
  cat "$tmp/build.log"
  echo "FAIL: the rootfs could not be built"
  exit 1
fi

# Room for a busy machine, as for podman.so: BX_SLOW, 4 unless set (boxmaker-runtime-check(1)).
"$check" "$module" --slow "${BX_SLOW:-4}" --option "rootfs=$tmp/rootfs" \
  --option "state_dir=$tmp/state" --option "cgroup_path=/bx-gvisor-kit-$$" >"$tmp/out" 2>"$tmp/log"
rc=$?
cat "$tmp/out"
last=$(tail -n 1 "$tmp/out")
case $last in
  "conformance: "*" passed, "*" failed") ;;
  *) cat "$tmp/log"; echo "FAIL: no summary line (exit $rc)"; exit 1 ;;
esac
if [ "$rc" != 0 ] || grep -q '^FAIL: ' "$tmp/out" || ! echo "$last" | grep -q ' 0 failed$'; then
  cat "$tmp/log"
  echo "FAIL: gvisor.so fails the conformance kit (exit $rc)"
  exit 1
fi
grep -q '^skip: read_file runs toolkit' "$tmp/out" && { echo "FAIL: gvisor.so taken for no sandbox"; exit 1; }
for c in /sys/fs/cgroup/*/bx-gvisor-kit-$$ /sys/fs/cgroup/bx-gvisor-kit-$$; do
  [ -d "$c" ] && rmdir "$c" 2>/dev/null
done
echo "ok: gvisor.so keeps the sandbox contract"
